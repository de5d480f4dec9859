package colbench.worker.ipc;

import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VarBinaryVector;

/**
 * Materialize: the default accessors, one new object per value ({@code byte[]} from {@code get(i)} after an
 * {@code isNull} check, as the post's default reader; {@code Integer}/{@code Long} from {@code getObject(i)}).
 * Each object is stored into a small per-batch array that ends up in the tally, so escape analysis cannot remove
 * the allocation.
 * <p>One loop per vector type on purpose: a generic loop over {@code FieldVector.getObject} would add the
 * virtual calls the measured reader must not have.
 */
final class MaterializeConsumer {
  /** Objects kept alive per batch, a power of two; the array is young, so storing into it is cheap for G1. */
  private static final int SINK = 256;

  private MaterializeConsumer() {}

  static ColumnConsumer of(ColumnType type) {
    return switch (type) {
      case INT32 -> MaterializeConsumer::int32;
      case INT64 -> MaterializeConsumer::int64;
      case BINARY -> MaterializeConsumer::binary;
    };
  }

  private static void int32(FieldVector vector, Tally tally) {
    IntVector v = (IntVector) vector;
    Object[] sink = new Object[SINK];
    int n = v.getValueCount();
    long sum = 0;
    long set = 0;
    for (int i = 0; i < n; i++) {
      Integer value = v.getObject(i);
      if (value != null) {
        sink[i & (SINK - 1)] = value;
        sum += value;
        set++;
      }
    }
    tally.sink = sink;
    tally.rows += n;
    tally.bytes += 4 * set;
    tally.checksum += sum;
  }

  private static void int64(FieldVector vector, Tally tally) {
    BigIntVector v = (BigIntVector) vector;
    Object[] sink = new Object[SINK];
    int n = v.getValueCount();
    long sum = 0;
    long set = 0;
    for (int i = 0; i < n; i++) {
      Long value = v.getObject(i);
      if (value != null) {
        sink[i & (SINK - 1)] = value;
        sum += value;
        set++;
      }
    }
    tally.sink = sink;
    tally.rows += n;
    tally.bytes += 8 * set;
    tally.checksum += sum;
  }

  private static void binary(FieldVector vector, Tally tally) {
    VarBinaryVector v = (VarBinaryVector) vector;
    Object[] sink = new Object[SINK];
    int n = v.getValueCount();
    long length = 0;
    long sum = 0;
    for (int i = 0; i < n; i++) {
      if (!v.isNull(i)) {
        byte[] value = v.get(i);
        sink[i & (SINK - 1)] = value;
        length += value.length;
        sum += value.length + (value.length > 0 ? value[0] & 0xFF : 0);
      }
    }
    tally.sink = sink;
    tally.rows += n;
    tally.bytes += length;
    tally.checksum += sum;
  }
}
