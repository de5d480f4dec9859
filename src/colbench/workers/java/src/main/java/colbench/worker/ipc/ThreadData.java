package colbench.worker.ipc;

import colbench.worker.io.InMemoryFile;
import java.io.IOException;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.memory.netty.NettyAllocationManager;
import org.apache.arrow.vector.FieldVector;

/**
 * Everything one reader thread owns, shared with no other thread: its allocator, its in-memory Arrow file
 * (on-heap chunks for {@code stream}, one off-heap buffer for {@code buffer}) and the tally it must reproduce.
 * Made and used on that thread only.
 */
final class ThreadData implements AutoCloseable {
  private final IpcParams params;
  private final int index;
  private final BufferAllocator allocator;
  private final ColumnConsumer consumer;
  private InMemoryFile heapFile;
  private ArrowBuf offHeapFile;
  private long fileBytes;
  private Tally expected;

  ThreadData(IpcParams params, int index) {
    this.params = params;
    this.index = index;
    this.allocator = new RootAllocator(RootAllocator.configBuilder()
        .allocationManagerFactory(NettyAllocationManager.FACTORY)
        .build());
    this.consumer = ColumnConsumer.of(params.access(), params.type());
  }

  /** Untimed: generate this thread's data and write it as an Arrow file into memory. */
  void generate() throws IOException {
    InMemoryFile file = new InMemoryFile();
    expected = new DataGenerator(params).write(file, allocator, ValuePattern.threadSeed(params.seed(), index));
    fileBytes = file.size();
    if (params.source() == Source.BUFFER) {
      offHeapFile = file.copyTo(allocator);
      file.discard();
    } else {
      heapFile = file;
    }
  }

  /** The timed workload of this thread: open the file, load every batch, consume every value. */
  Tally readOnce() throws IOException {
    Tally tally = new Tally();
    try (BatchReader reader = openReader()) {
      FieldVector vector = reader.root().getVector(0);
      while (reader.loadNextBatch()) {
        consumer.consume(vector, tally);
        tally.batches++;
      }
    }
    return tally;
  }

  private BatchReader openReader() throws IOException {
    return params.source() == Source.BUFFER
        ? new ZeroCopyFileReader(offHeapFile, fileBytes, allocator)
        : new CopyingFileReader(heapFile.openRead(), allocator);
  }

  Tally expected() {
    return expected;
  }

  long fileBytes() {
    return fileBytes;
  }

  long allocatorPeakBytes() {
    return allocator.getPeakMemoryAllocation();
  }

  @Override
  public void close() {
    if (offHeapFile != null) {
      offHeapFile.close();
      offHeapFile = null;
    }
    heapFile = null;
    allocator.close();
  }
}
