package colbench.worker.ipc;

import org.apache.arrow.vector.FieldVector;

/**
 * Consumes the column of one loaded record batch into a {@link Tally}. One implementation per (access mode,
 * type), chosen once per process, so the call in the batch loop stays monomorphic.
 */
@FunctionalInterface
public interface ColumnConsumer {
  void consume(FieldVector vector, Tally tally);

  static ColumnConsumer of(Access access, ColumnType type) {
    return switch (access) {
      case LAZY -> LazyConsumer.of(type);
      case OFFSETS -> HolderConsumer.of(type);
      case SCAN -> ScanConsumer.of(type);
      case MATERIALIZE -> MaterializeConsumer.of(type);
    };
  }
}
