package colbench.worker.io;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.SeekableByteChannel;
import java.nio.channels.WritableByteChannel;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;

/**
 * A file held on the Java heap in fixed 1 MiB chunks, like the MemoryChannel of the original benchmark: written
 * once through {@link #writer()}, then read any number of times through independent {@link #openRead()} views.
 * Reading copies bytes out of the chunks, as reading a file through a channel does; sizes beyond 2 GiB work.
 */
public final class InMemoryFile {
  public static final int CHUNK_SIZE = 1 << 20;

  private final List<byte[]> chunks = new ArrayList<>();
  private long size;
  private boolean sealed;

  /** Append-only channel that fills the file; closing it seals the file. */
  public WritableByteChannel writer() {
    return new Writer();
  }

  /** A new read view with its own position; closing it leaves the file as it is. */
  public SeekableByteChannel openRead() {
    return new ReadView();
  }

  public long size() {
    return size;
  }

  /**
   * Copy the whole file into one contiguous off-heap buffer of {@code allocator} (the caller owns it). The
   * buffer's capacity may be larger than {@link #size()}: the allocator rounds up.
   */
  public ArrowBuf copyTo(BufferAllocator allocator) {
    ArrowBuf buf = allocator.buffer(size);
    long written = 0;
    for (byte[] chunk : chunks) {
      int length = (int) Math.min(chunk.length, size - written);
      buf.setBytes(written, chunk, 0, length);
      written += length;
    }
    buf.writerIndex(size);
    return buf;
  }

  /** Let the chunks go (after {@link #copyTo}, when only the off-heap copy is read). */
  public void discard() {
    chunks.clear();
    size = 0;
  }

  private final class Writer implements WritableByteChannel {
    private boolean open = true;

    @Override
    public int write(ByteBuffer src) throws IOException {
      if (!open || sealed) {
        throw new ClosedChannelException();
      }
      int written = 0;
      while (src.hasRemaining()) {
        int inChunk = (int) (size % CHUNK_SIZE);
        if (inChunk == 0 && size / CHUNK_SIZE == chunks.size()) {
          chunks.add(new byte[CHUNK_SIZE]);
        }
        byte[] chunk = chunks.get((int) (size / CHUNK_SIZE));
        int length = Math.min(CHUNK_SIZE - inChunk, src.remaining());
        src.get(chunk, inChunk, length);
        size += length;
        written += length;
      }
      return written;
    }

    @Override
    public boolean isOpen() {
      return open;
    }

    @Override
    public void close() {
      open = false;
      sealed = true;
    }
  }

  /** Reading copies bytes out of the chunks, chunk by chunk, as reading a file through a channel does. */
  private final class ReadView extends ReadOnlyChannel {
    ReadView() {
      super(size);
    }

    @Override
    protected void copy(long from, ByteBuffer dst, int length) {
      long at = from;
      int left = length;
      while (left > 0) {
        int inChunk = (int) (at % CHUNK_SIZE);
        byte[] chunk = chunks.get((int) (at / CHUNK_SIZE));
        int part = Math.min(CHUNK_SIZE - inChunk, left);
        dst.put(chunk, inChunk, part);
        at += part;
        left -= part;
      }
    }
  }
}
