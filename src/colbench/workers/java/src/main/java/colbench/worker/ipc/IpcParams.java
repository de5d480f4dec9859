package colbench.worker.ipc;

import colbench.worker.CaseSpec;
import colbench.worker.WorkerException;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;

/**
 * The params of {@code ipc-bandwidth}, shared with the Python implementation, validated. Unknown params and
 * values are refused: the protocol wants an error result, never a silently ignored param.
 */
public record IpcParams(
    ColumnType type,
    int valueSize,
    long rows,
    int batchRows,
    int threads,
    Source source,
    Access access,
    long seed,
    String allocator,
    String cache) {

  /** Every param this benchmark takes (its own and the framework's). */
  public static final Set<String> NAMES = Set.of(
      "type", "value_size", "rows", "batch_rows", "threads", "source", "access", "runtime", "allocator", "cache",
      "seed");

  public static IpcParams from(CaseSpec spec) {
    CaseSpec.Params p = spec.params();
    Set<String> unknown = new TreeSet<>(p.names());
    unknown.removeAll(NAMES);
    if (!unknown.isEmpty()) {
      throw WorkerException.invalid("params " + unknown + " are not params of ipc-bandwidth; it takes "
          + new TreeSet<>(NAMES));
    }
    String runtime = p.text("runtime", "java");
    if (!runtime.equals("java")) {
      throw WorkerException.invalid("param runtime=" + runtime + " is not run by the Java worker");
    }
    ColumnType type = choice(p.text("type", null), "type", ColumnType.values(), ColumnType::param);
    Source source = choice(p.text("source", null), "source", Source.values(), Source::param);
    Access access = choice(p.text("access", null), "access", Access.values(), Access::param);
    long rows = positive(p, "rows", -1);
    long batchRows = positive(p, "batch_rows", -1);
    if (batchRows > Integer.MAX_VALUE) {
      throw WorkerException.invalid("param batch_rows=" + batchRows + ": an Arrow Java vector holds at most "
          + Integer.MAX_VALUE + " values");
    }
    long threads = positive(p, "threads", spec.threads());
    if (threads != spec.threads()) {
      throw WorkerException.invalid("params.threads=" + threads + " differs from the case's threads=" + spec.threads());
    }
    long valueSize = type.isBinary() ? positive(p, "value_size", -1) : p.integer("value_size", 0);
    if (type.isBinary() && Math.min(batchRows, rows) * valueSize > Integer.MAX_VALUE) {
      throw WorkerException.invalid("batch_rows x value_size = " + Math.min(batchRows, rows) * valueSize
          + " bytes: a binary batch holds at most " + Integer.MAX_VALUE + " bytes (32-bit offsets)");
    }
    long seed = p.integer("seed", spec.seed());
    String allocator = p.text("allocator", spec.allocator());
    String cache = p.text("cache", spec.cache());
    return new IpcParams(type, (int) valueSize, rows, (int) batchRows, (int) threads, source, access, seed,
        allocator, cache);
  }

  /** Value bytes per row as the post counted them: 4/8 per int/long, the payload for binary. */
  public int valueBytes() {
    return type.valueBytes(valueSize);
  }

  private static long positive(CaseSpec.Params p, String name, long missing) {
    long value = p.integer(name, missing);
    if (value < 1) {
      throw WorkerException.invalid(p.has(name)
          ? "param " + name + "=" + value + " must be >= 1" : "param " + name + " is required");
    }
    return value;
  }

  private static <E> E choice(String value, String name, E[] options, Function<E, String> param) {
    List<String> names = Arrays.stream(options).map(param).toList();
    if (value == null) {
      throw WorkerException.invalid("param " + name + " is required; choose from " + String.join(", ", names));
    }
    for (E option : options) {
      if (param.apply(option).equals(value)) {
        return option;
      }
    }
    throw WorkerException.invalid(
        "param " + name + "=" + value + " is not accepted; choose from " + String.join(", ", names));
  }
}
