package colbench.worker.io;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.NonWritableChannelException;
import java.nio.channels.SeekableByteChannel;
import org.apache.arrow.memory.ArrowBuf;

/**
 * A read-only channel over an off-heap {@link ArrowBuf} that holds a whole file. Used only for the small parts
 * of a file that must be parsed from bytes (footer, message metadata); closing it leaves the buffer alone.
 */
public final class ArrowBufChannel implements SeekableByteChannel {
  private final ArrowBuf buf;
  private final long size;
  private long position;
  private boolean open = true;

  /** The file is the first {@code size} bytes of {@code buf} (an allocator may round a buffer's capacity up). */
  public ArrowBufChannel(ArrowBuf buf, long size) {
    if (size > buf.capacity()) {
      throw new IllegalArgumentException("size " + size + " > capacity " + buf.capacity());
    }
    this.buf = buf;
    this.size = size;
  }

  @Override
  public int read(ByteBuffer dst) throws IOException {
    if (!open) {
      throw new ClosedChannelException();
    }
    if (position >= size) {
      return dst.hasRemaining() ? -1 : 0;
    }
    int length = (int) Math.min(dst.remaining(), size - position);
    ByteBuffer window = dst.slice();
    window.limit(length);
    buf.getBytes(position, window);
    dst.position(dst.position() + length);
    position += length;
    return length;
  }

  @Override
  public int write(ByteBuffer src) {
    throw new NonWritableChannelException();
  }

  @Override
  public long position() {
    return position;
  }

  @Override
  public SeekableByteChannel position(long newPosition) {
    if (newPosition < 0) {
      throw new IllegalArgumentException("negative position " + newPosition);
    }
    position = newPosition;
    return this;
  }

  @Override
  public long size() {
    return size;
  }

  @Override
  public SeekableByteChannel truncate(long newSize) {
    throw new NonWritableChannelException();
  }

  @Override
  public boolean isOpen() {
    return open;
  }

  @Override
  public void close() {
    open = false;
  }
}
