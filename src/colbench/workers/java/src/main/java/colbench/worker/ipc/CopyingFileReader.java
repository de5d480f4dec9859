package colbench.worker.ipc;

import java.io.IOException;
import java.nio.channels.SeekableByteChannel;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowFileReader;

/** Source {@code stream}: Arrow Java's own ArrowFileReader, which reads each batch into newly allocated buffers. */
final class CopyingFileReader implements BatchReader {
  private final ArrowFileReader reader;

  CopyingFileReader(SeekableByteChannel channel, BufferAllocator allocator) {
    this.reader = new ArrowFileReader(channel, allocator);
  }

  @Override
  public boolean loadNextBatch() throws IOException {
    return reader.loadNextBatch();
  }

  @Override
  public VectorSchemaRoot root() throws IOException {
    return reader.getVectorSchemaRoot();
  }

  @Override
  public void close() throws IOException {
    reader.close();
  }
}
