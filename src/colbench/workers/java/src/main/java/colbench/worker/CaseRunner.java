package colbench.worker;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Runs one case in this process: builds the benchmark, sets it up, runs warm-ups and timed iterations (checking
 * each), and fills the result. Benchmark failures become error results; they never escape.
 */
public final class CaseRunner {
  private final FaultInjection faults;

  public CaseRunner(FaultInjection faults) {
    this.faults = faults;
  }

  public ResultDocument run(CaseSpec spec) {
    ResultDocument result = new ResultDocument(VersionInfo.javaVersion());
    result.threads(spec.threads(), null);
    result.allocator(spec.allocator(), null);
    result.cache(spec.cache(), null);
    Benchmark bench = null;
    try {
      bench = Benchmarks.create(spec);
      faults.atSetup();
      bench.setup();
      result.threads(spec.threads(), bench.threadsApplied());
      result.allocator(spec.allocator(), bench.allocatorActual());
      bench.units().forEach(result::unit);
      int total = spec.warmup() + spec.iterations();
      for (int index = 0; index < total; index++) {
        faults.atIteration(index);
        ProcessStats.CpuTimes cpuBefore = ProcessStats.cpuTimes();
        Benchmark.Iteration iteration = bench.run();
        ProcessStats.CpuTimes cpuAfter = ProcessStats.cpuTimes();
        ProcessStats.CpuTimes cpu = cpuBefore == null || cpuAfter == null ? null : cpuAfter.minus(cpuBefore);
        result.addSample(index < spec.warmup(), iteration.wallNanos() / 1e9, cpu, iteration.metrics());
        result.output(bench.check(iteration));
      }
      result.work(bench.work());
    } catch (WorkerException e) {
      result.fail(e.kind(), e);
    } catch (OutOfMemoryError | org.apache.arrow.memory.OutOfMemoryException e) {
      result.fail("oom", e);
    } catch (Throwable e) { // anything else the benchmark throws, errors included: the result must still be written
      result.fail("exception", e);
    } finally {
      result.memory(memory(bench));
      if (bench != null) {
        finish(bench, result);
      }
    }
    result.versions(VersionInfo.versions());
    return result;
  }

  /** Collect what the benchmark knows, then tear it down. */
  private static void finish(Benchmark bench, ResultDocument result) {
    try {
      bench.warnings().forEach(result::warn);
      Map<String, Object> details = bench.details();
      if (!details.isEmpty()) {
        result.extra(details);
      }
    } catch (RuntimeException e) {
      result.warn("details failed: " + e);
    }
    try {
      bench.close();
    } catch (RuntimeException e) {
      result.warn("teardown failed: " + e);
    }
  }

  private static Map<String, Object> memory(Benchmark bench) {
    Map<String, Object> memory = new LinkedHashMap<>();
    memory.put("peak_rss_bytes", ProcessStats.peakRssBytes());
    long[] faults = ProcessStats.pageFaults();
    if (faults != null) {
      memory.put("page_faults_minor", faults[0]);
      memory.put("page_faults_major", faults[1]);
    }
    Benchmark.EngineMemory engine = null;
    if (bench != null) {
      try {
        engine = bench.engineMemory();
      } catch (RuntimeException e) {
        engine = null;
      }
    }
    memory.put("engine_peak_bytes", engine == null ? null : engine.peakBytes());
    memory.put("engine_memory", engine == null ? null : engine.what());
    if (engine != null) {
      memory.putAll(engine.parts());
    }
    return memory;
  }
}
