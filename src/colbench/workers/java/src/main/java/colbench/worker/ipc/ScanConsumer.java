package colbench.worker.ipc;

import org.apache.arrow.memory.util.MemoryUtil;
import org.apache.arrow.vector.BaseFixedWidthVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VarBinaryVector;

/**
 * Scan: every value byte is read in place, 8 bytes at a time, through raw addresses
 * ({@link MemoryUtil#getLong(long)}: no bounds checks, no objects). This is the "unsafe" reader of the post,
 * as far as Arrow Java still offers it: {@code sun.misc.Unsafe} itself is no longer exposed, MemoryUtil's
 * address accessors are. Validity is not consulted per value; bytes are counted from the null count.
 */
final class ScanConsumer {
  private ScanConsumer() {}

  static ColumnConsumer of(ColumnType type) {
    if (!MemoryUtil.LITTLE_ENDIAN) {
      throw new UnsupportedOperationException("scan assumes a little-endian machine");
    }
    return switch (type) {
      case INT32 -> ScanConsumer::int32;
      case INT64 -> ScanConsumer::int64;
      case BINARY -> ScanConsumer::binary;
    };
  }

  private static void int32(FieldVector vector, Tally tally) {
    BaseFixedWidthVector v = (BaseFixedWidthVector) vector;
    int n = v.getValueCount();
    long address = v.getDataBuffer().memoryAddress();
    long pairs = n >>> 1;
    long sum = 0;
    for (long k = 0; k < pairs; k++) {
      long word = MemoryUtil.getLong(address + (k << 3));
      sum += (int) word + (word >> 32);
    }
    if ((n & 1) != 0) {
      sum += MemoryUtil.getInt(address + 4L * (n - 1));
    }
    tally.rows += n;
    tally.bytes += 4L * (n - v.getNullCount());
    tally.checksum += sum;
  }

  private static void int64(FieldVector vector, Tally tally) {
    BaseFixedWidthVector v = (BaseFixedWidthVector) vector;
    int n = v.getValueCount();
    long address = v.getDataBuffer().memoryAddress();
    long sum = 0;
    for (long k = 0; k < n; k++) {
      sum += MemoryUtil.getLong(address + (k << 3));
    }
    tally.rows += n;
    tally.bytes += 8L * (n - v.getNullCount());
    tally.checksum += sum;
  }

  private static void binary(FieldVector vector, Tally tally) {
    VarBinaryVector v = (VarBinaryVector) vector;
    int n = v.getValueCount();
    tally.rows += n;
    if (n == 0) {
      return;
    }
    long offsets = v.getOffsetBuffer().memoryAddress();
    long data = v.getDataBuffer().memoryAddress();
    int start = MemoryUtil.getInt(offsets);
    int end = MemoryUtil.getInt(offsets + 4L * n);
    long p = data + start;
    long stop = data + end;
    long sum = 0;
    for (; p + 8 <= stop; p += 8) {
      sum += MemoryUtil.getLong(p);
    }
    long tail = 0;
    for (int shift = 0; p < stop; p++, shift += 8) {
      tail |= (MemoryUtil.getByte(p) & 0xFFL) << shift;
    }
    tally.bytes += end - start;
    tally.checksum += sum + tail;
  }
}
