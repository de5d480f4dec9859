package colbench.worker.ipc;

import colbench.worker.io.InMemoryFile;
import java.io.IOException;
import java.nio.channels.WritableByteChannel;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowFileWriter;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * Writes one thread's data (see {@link ValuePattern}) as an Arrow file of {@code batch_rows}-row record batches
 * into an {@link InMemoryFile}, one batch in memory at a time, and works out from the values themselves (not by
 * reading the file back) what a reader with the given access mode must see.
 */
public final class DataGenerator {
  public static final String COLUMN = "c0";

  private final IpcParams params;

  public DataGenerator(IpcParams params) {
    this.params = params;
  }

  public static Schema schema(ColumnType type) {
    return new Schema(List.of(new Field(COLUMN, FieldType.nullable(type.arrowType()), null)));
  }

  /** Generate and write; returns the tally a reader of this file must arrive at. */
  public Tally write(InMemoryFile file, BufferAllocator allocator, long seed) throws IOException {
    Tally expected = new Tally();
    ScanWords words = new ScanWords();
    byte[] value = new byte[params.type().isBinary() ? params.valueSize() : 0];
    try (VectorSchemaRoot root = VectorSchemaRoot.create(schema(params.type()), allocator);
        WritableByteChannel out = file.writer();
        ArrowFileWriter writer = new ArrowFileWriter(root, null, out)) {
      writer.start();
      FieldVector vector = root.getVector(0);
      for (long first = 0; first < params.rows(); first += params.batchRows()) {
        int n = (int) Math.min(params.batchRows(), params.rows() - first);
        switch (params.type()) {
          case INT32 -> fillInt32((IntVector) vector, first, n, seed, expected);
          case INT64 -> fillInt64((BigIntVector) vector, first, n, seed, expected);
          case BINARY -> fillBinary((VarBinaryVector) vector, first, n, seed, value, expected, words);
          default -> throw new IllegalStateException("unhandled type " + params.type());
        }
        root.setRowCount(n);
        writer.writeBatch();
        expected.rows += n;
        expected.batches++;
      }
      writer.end();
    }
    if (params.type().isBinary()) {
      expected.checksum = switch (params.access()) {
        case OFFSETS -> expected.bytes;
        case MATERIALIZE -> expected.checksum;
        case SCAN -> words.sum;
        case LAZY -> 0;
      };
    }
    if (params.access() == Access.LAZY) {
      expected.checksum = 0;
    }
    return expected;
  }

  private static void fillInt32(IntVector v, long first, int n, long seed, Tally expected) {
    v.allocateNew(n);
    long sum = 0;
    for (int i = 0; i < n; i++) {
      int x = ValuePattern.int32(first + i, seed);
      v.set(i, x);
      sum += x;
    }
    v.setValueCount(n);
    expected.checksum += sum;
    expected.bytes += 4L * n;
  }

  private static void fillInt64(BigIntVector v, long first, int n, long seed, Tally expected) {
    v.allocateNew(n);
    long sum = 0;
    for (int i = 0; i < n; i++) {
      long x = ValuePattern.int64(first + i, seed);
      v.set(i, x);
      sum += x;
    }
    v.setValueCount(n);
    expected.checksum += sum;
    expected.bytes += 8L * n;
  }

  /** Binary: {@code expected.checksum} gets the materialize checksum, {@code words} the scan checksum. */
  private static void fillBinary(VarBinaryVector v, long first, int n, long seed, byte[] value, Tally expected,
      ScanWords words) {
    v.allocateNew((long) n * value.length, n);
    for (int i = 0; i < n; i++) {
      ValuePattern.binary(value, first + i, seed);
      v.set(i, value);
      expected.checksum += value.length + (value.length > 0 ? value[0] & 0xFF : 0);
      words.add(value);
    }
    v.setValueCount(n);
    words.endBatch();
    expected.bytes += (long) n * value.length;
  }

  /** The scan checksum, byte by byte: little-endian 64-bit words of each batch's payload, zero-padded, summed. */
  private static final class ScanWords {
    long sum;
    private long word;
    private int filled;

    void add(byte[] bytes) {
      for (byte b : bytes) {
        word |= (b & 0xFFL) << (filled << 3);
        if (++filled == 8) {
          sum += word;
          word = 0;
          filled = 0;
        }
      }
    }

    void endBatch() {
      sum += word;
      word = 0;
      filled = 0;
    }
  }
}
