package colbench.worker.ipc;

import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.holders.NullableBigIntHolder;
import org.apache.arrow.vector.holders.NullableIntHolder;
import org.apache.arrow.vector.holders.NullableVarBinaryHolder;

/**
 * Offsets: the holder API ({@code get(i, holder)}), zero-copy. For binary only the start and end offsets are
 * read, exactly what the post's holder reader did; for ints the holder carries the value.
 * <p>One loop per vector type on purpose: Arrow's holders share no interface, and a generic loop would add
 * the virtual calls and boxing the measured reader must not have.
 */
final class HolderConsumer {
  private HolderConsumer() {}

  static ColumnConsumer of(ColumnType type) {
    return switch (type) {
      case INT32 -> HolderConsumer::int32;
      case INT64 -> HolderConsumer::int64;
      case BINARY -> HolderConsumer::binary;
    };
  }

  private static void int32(FieldVector vector, Tally tally) {
    IntVector v = (IntVector) vector;
    NullableIntHolder holder = new NullableIntHolder();
    int n = v.getValueCount();
    long sum = 0;
    long set = 0;
    for (int i = 0; i < n; i++) {
      v.get(i, holder);
      if (holder.isSet != 0) {
        sum += holder.value;
        set++;
      }
    }
    tally.rows += n;
    tally.bytes += 4 * set;
    tally.checksum += sum;
  }

  private static void int64(FieldVector vector, Tally tally) {
    BigIntVector v = (BigIntVector) vector;
    NullableBigIntHolder holder = new NullableBigIntHolder();
    int n = v.getValueCount();
    long sum = 0;
    long set = 0;
    for (int i = 0; i < n; i++) {
      v.get(i, holder);
      if (holder.isSet != 0) {
        sum += holder.value;
        set++;
      }
    }
    tally.rows += n;
    tally.bytes += 8 * set;
    tally.checksum += sum;
  }

  private static void binary(FieldVector vector, Tally tally) {
    VarBinaryVector v = (VarBinaryVector) vector;
    NullableVarBinaryHolder holder = new NullableVarBinaryHolder();
    int n = v.getValueCount();
    long length = 0;
    for (int i = 0; i < n; i++) {
      v.get(i, holder);
      if (holder.isSet != 0) {
        length += holder.end - holder.start;
      }
    }
    tally.rows += n;
    tally.bytes += length;
    tally.checksum += length;
  }
}
