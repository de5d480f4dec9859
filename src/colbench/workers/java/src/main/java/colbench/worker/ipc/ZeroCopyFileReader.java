package colbench.worker.ipc;

import colbench.worker.io.ArrowBufChannel;
import java.io.IOException;
import java.util.List;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowFileReader;
import org.apache.arrow.vector.ipc.ReadChannel;
import org.apache.arrow.vector.ipc.message.ArrowBlock;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.ipc.message.MessageMetadataResult;
import org.apache.arrow.vector.ipc.message.MessageSerializer;

/**
 * Source {@code buffer}: the file is one off-heap buffer, and each record batch's buffers are slices of it
 * (reference-counted, no copy). ArrowFileReader only parses the footer and schema; a batch's message metadata
 * (a few hundred bytes) is parsed from a copy, its body never is. Arrow Java has no public zero-copy file
 * reader, so this composes the public pieces it is built from.
 */
final class ZeroCopyFileReader implements BatchReader {
  private final ArrowBuf file;
  private final long size;
  private final ArrowFileReader footer;
  private final List<ArrowBlock> blocks;
  private final VectorLoader loader;
  private int next;

  /** Reads the file held in the first {@code size} bytes of {@code file}. */
  ZeroCopyFileReader(ArrowBuf file, long size, BufferAllocator allocator) throws IOException {
    this.file = file;
    this.size = size;
    this.footer = new ArrowFileReader(new ArrowBufChannel(file, size), allocator);
    this.blocks = footer.getRecordBlocks();
    this.loader = new VectorLoader(footer.getVectorSchemaRoot());
  }

  @Override
  public boolean loadNextBatch() throws IOException {
    if (next >= blocks.size()) {
      return false;
    }
    ArrowBlock block = blocks.get(next++);
    ArrowBufChannel channel = new ArrowBufChannel(file, size);
    channel.position(block.getOffset());
    MessageMetadataResult metadata = MessageSerializer.readMessage(new ReadChannel(channel));
    if (metadata == null) {
      throw new IOException("no record batch message at offset " + block.getOffset());
    }
    ArrowBuf body = file.slice(block.getOffset() + block.getMetadataLength(), block.getBodyLength());
    // deserializeRecordBatch releases the body it is handed (it expects a buffer of its own): a slice shares
    // the file's reference count, so take one reference for it to give back.
    file.getReferenceManager().retain();
    try (ArrowRecordBatch batch = MessageSerializer.deserializeRecordBatch(metadata, body)) {
      loader.load(batch);
    }
    return true;
  }

  @Override
  public VectorSchemaRoot root() throws IOException {
    return footer.getVectorSchemaRoot();
  }

  @Override
  public void close() throws IOException {
    footer.close();
  }
}
