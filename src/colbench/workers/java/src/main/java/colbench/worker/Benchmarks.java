package colbench.worker;

import colbench.worker.ipc.IpcBandwidth;
import java.util.List;

/** The benchmarks this worker runs, by protocol name. */
public final class Benchmarks {
  private static final List<String> NAMES = List.of(IpcBandwidth.NAME);

  private Benchmarks() {}

  public static Benchmark create(CaseSpec spec) {
    if (IpcBandwidth.NAME.equals(spec.benchmark())) {
      return IpcBandwidth.create(spec);
    }
    throw WorkerException.invalid(
        "benchmark " + spec.benchmark() + " is not run by the Java worker; it runs " + String.join(", ", NAMES));
  }
}
