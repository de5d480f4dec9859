package colbench.worker.io;

import java.nio.ByteBuffer;
import org.apache.arrow.memory.ArrowBuf;

/**
 * A read-only channel over an off-heap {@link ArrowBuf} that holds a whole file. Used only for the small parts
 * of a file that must be parsed from bytes (footer, message metadata); closing it leaves the buffer alone.
 */
public final class ArrowBufChannel extends ReadOnlyChannel {
  private final ArrowBuf buf;

  /** The file is the first {@code size} bytes of {@code buf} (an allocator may round a buffer's capacity up). */
  public ArrowBufChannel(ArrowBuf buf, long size) {
    super(checkedSize(buf, size));
    this.buf = buf;
  }

  private static long checkedSize(ArrowBuf buf, long size) {
    if (size > buf.capacity()) {
      throw new IllegalArgumentException("size " + size + " > capacity " + buf.capacity());
    }
    return size;
  }

  @Override
  protected void copy(long from, ByteBuffer dst, int length) {
    ByteBuffer window = dst.slice();
    window.limit(length);
    buf.getBytes(from, window);
    dst.position(dst.position() + length);
  }
}
