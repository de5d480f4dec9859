package colbench.worker.ipc;

import colbench.worker.Benchmark;
import colbench.worker.CaseSpec;
import colbench.worker.ProcessStats;
import colbench.worker.WorkerException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.BoundsChecking;

/**
 * {@code ipc-bandwidth} with {@code runtime=java} (experiment E3, the Arrow Java in-memory read bandwidth study):
 * each thread generates one column, writes it untimed as an Arrow file into memory, and every iteration reads
 * all threads' files back at once, consuming every batch with the chosen access mode. Gbps counts value bytes
 * only, as the original post did.
 */
public final class IpcBandwidth implements Benchmark {
  public static final String NAME = "ipc-bandwidth";

  private final IpcParams params;
  private final List<ThreadData> data = new ArrayList<>();
  private ThreadTeam team;
  private Tally expected;

  private IpcBandwidth(IpcParams params) {
    this.params = params;
  }

  public static IpcBandwidth create(CaseSpec spec) {
    return new IpcBandwidth(IpcParams.from(spec));
  }

  public IpcParams params() {
    return params;
  }

  @Override
  public void setup() throws Exception {
    team = new ThreadTeam(params.threads());
    // each member builds its allocator and data on its own thread
    List<ThreadData> made = team.all(member -> {
      ThreadData own = new ThreadData(params, member);
      try {
        own.generate();
      } catch (Exception | Error e) {
        try {
          own.close();
        } catch (RuntimeException closeFailure) { // e.g. Arrow reporting buffers an out-of-memory left behind
          e.addSuppressed(closeFailure);
        }
        throw e;
      }
      return own;
    });
    data.addAll(made);
    expected = new Tally();
    for (ThreadData own : data) {
      expected.add(own.expected());
    }
  }

  @Override
  public Iteration run() throws Exception {
    ThreadTeam.Timed<Tally> timed = team.timed(member -> data.get(member).readOnce());
    Tally total = new Tally();
    timed.results().forEach(total::add);
    double gbps = total.bytes() * 8.0 / timed.wallNanos();
    return new Iteration(timed.wallNanos(), Map.of("gbps", gbps), total);
  }

  @Override
  public Output check(Iteration iteration) {
    Tally seen = (Tally) iteration.output();
    boolean lazy = params.access() == Access.LAZY;
    if (seen.rows() != expected.rows() || seen.bytes() != expected.bytes() || seen.batches() != expected.batches()) {
      throw WorkerException.check(String.format("read %d rows, %d value bytes in %d batches; expected %d, %d, %d",
          seen.rows(), seen.bytes(), seen.batches(), expected.rows(), expected.bytes(), expected.batches()));
    }
    if (!lazy && seen.checksum() != expected.checksum()) {
      throw WorkerException.check("checksum " + seen.checksum() + " != expected " + expected.checksum());
    }
    return new Output(seen.rows(), 1, lazy ? null : seen.checksum(), null);
  }

  @Override
  public Work work() {
    return new Work(expected.bytes(), expected.rows());
  }

  @Override
  public Map<String, Object> threadsApplied() {
    Map<String, Object> applied = new LinkedHashMap<>();
    applied.put("reader_threads", team == null ? 0 : team.size());
    applied.put("available_processors", Runtime.getRuntime().availableProcessors());
    return applied;
  }

  @Override
  public EngineMemory engineMemory() {
    long arrowPeak = 0;
    for (ThreadData own : data) {
      arrowPeak += own.allocatorPeakBytes();
    }
    long heapPeak = ProcessStats.peakHeapBytes();
    Map<String, Object> parts = new LinkedHashMap<>();
    parts.put("jvm_heap_peak_bytes", heapPeak);
    parts.put("arrow_allocator_peak_bytes", arrowPeak);
    return new EngineMemory(heapPeak + arrowPeak, "jvm_heap_peak+arrow_allocator_peak", parts);
  }

  @Override
  public Map<String, String> units() {
    return Map.of("gbps", "Gbit/s");
  }

  @Override
  public List<String> warnings() {
    List<String> warnings = new ArrayList<>();
    if (!"default".equals(params.allocator())) {
      warnings.add("allocator=" + params.allocator() + " selects an Arrow C++ memory pool; Arrow Java allocates "
          + "through netty whatever it says");
    }
    if ("cold".equals(params.cache())) {
      warnings.add("cache=cold has no effect: ipc-bandwidth reads from memory, there is no file to evict");
    }
    return warnings;
  }

  @Override
  public String allocatorActual() {
    return "netty";
  }

  @Override
  public Map<String, Object> details() {
    Map<String, Object> details = new LinkedHashMap<>();
    details.put("reader", switch (params.access()) {
      case LAZY -> "load batches only";
      case OFFSETS -> "holder API get(i, holder)";
      case SCAN -> "MemoryUtil.getLong over buffer addresses (unsafe)";
      case MATERIALIZE -> params.type().isBinary() ? "get(i) -> byte[]" : "getObject(i) -> boxed";
    });
    details.put("source_layout", params.source() == Source.BUFFER
        ? "one off-heap ArrowBuf, batches sliced (zero-copy)"
        : "on-heap 1 MiB chunks, ArrowFileReader copies each batch");
    details.put("arrow_bounds_checking", BoundsChecking.BOUNDS_CHECKING_ENABLED);
    if (expected != null) {
      long fileBytes = 0;
      for (ThreadData own : data) {
        fileBytes += own.fileBytes();
      }
      details.put("ipc_file_bytes", fileBytes);
      details.put("batches_per_thread", expected.batches() / Math.max(1, data.size()));
    }
    details.put("value_bytes_per_row", params.valueBytes());
    details.put("seed", params.seed());
    return details;
  }

  @Override
  public void close() {
    try {
      if (team != null) {
        team.close();
      }
    } finally {
      for (ThreadData own : data) {
        own.close();
      }
      data.clear();
    }
  }
}
