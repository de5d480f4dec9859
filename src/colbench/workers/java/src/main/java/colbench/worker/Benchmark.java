package colbench.worker;

import java.util.Map;

/**
 * One benchmark's life cycle inside the worker process, as docs/protocol.md describes it. The runner calls
 * {@link #setup()} once, then {@link #run()} for every warm-up and timed iteration, each followed by
 * {@link #check(Iteration)}, then {@link #close()}. Only the workload inside {@code run} is timed, by the
 * benchmark itself, because only it knows where the workload starts and ends (for example a barrier start of
 * several threads).
 */
public interface Benchmark extends AutoCloseable {

  /** Untimed, once per process: generate data, start threads. */
  void setup() throws Exception;

  /** One execution of the workload; the returned wall time covers the workload only. */
  Iteration run() throws Exception;

  /** Untimed: verify the iteration's output, throwing {@link WorkerException#check} when it is wrong. */
  Output check(Iteration iteration);

  /** Units one iteration processes. */
  Work work();

  /** Thread counts as applied to every engine the benchmark uses. */
  Map<String, Object> threadsApplied();

  /** Engine-side memory: peak bytes and what they are a peak of. */
  EngineMemory engineMemory();

  /** The allocator actually used (protocol {@code allocator.actual}). */
  String allocatorActual();

  /** Units of the per-iteration metrics {@link Iteration#metrics()} reports, e.g. {@code gbps -> Gbit/s}. */
  Map<String, String> units();

  /** Things the result's reader should know (a param that had no effect …). */
  java.util.List<String> warnings();

  /** Benchmark-specific facts worth keeping with the result (layout, reader used …). */
  Map<String, Object> details();

  /** Untimed, once: stop threads, free memory. */
  @Override
  void close();

  /** What one iteration measured: wall time of the workload, further per-iteration metrics, and its output. */
  record Iteration(long wallNanos, Map<String, Double> metrics, Object output) {}

  /** What the correctness check saw (protocol {@code output}). */
  record Output(Long rows, Integer columns, Long checksum, Long fileSizeBytes) {}

  /** Protocol {@code work}. */
  record Work(Long bytes, Long rows) {}

  /** Engine memory: peak bytes, and a name for what was measured. */
  record EngineMemory(long peakBytes, String what, Map<String, Object> parts) {}
}
