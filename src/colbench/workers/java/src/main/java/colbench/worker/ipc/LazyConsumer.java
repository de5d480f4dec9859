package colbench.worker.ipc;

import org.apache.arrow.vector.BaseFixedWidthVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VarBinaryVector;

/**
 * Lazy: the batch is loaded and nothing of its values is read. Bytes are counted from metadata (null count,
 * first and last offset) so that Gbps stays comparable with the other modes.
 */
final class LazyConsumer {
  private LazyConsumer() {}

  static ColumnConsumer of(ColumnType type) {
    return switch (type) {
      case INT32, INT64 -> LazyConsumer::fixedWidth;
      case BINARY -> LazyConsumer::binary;
    };
  }

  private static void fixedWidth(FieldVector vector, Tally tally) {
    BaseFixedWidthVector v = (BaseFixedWidthVector) vector;
    int n = v.getValueCount();
    tally.rows += n;
    tally.bytes += (long) (n - v.getNullCount()) * v.getTypeWidth();
  }

  private static void binary(FieldVector vector, Tally tally) {
    VarBinaryVector v = (VarBinaryVector) vector;
    int n = v.getValueCount();
    tally.rows += n;
    if (n > 0) {
      tally.bytes += v.getEndOffset(n - 1) - v.getStartOffset(0);
    }
  }
}
