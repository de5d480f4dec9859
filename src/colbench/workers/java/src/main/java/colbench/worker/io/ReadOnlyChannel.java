package colbench.worker.io;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.NonWritableChannelException;
import java.nio.channels.SeekableByteChannel;

/**
 * A read-only {@link SeekableByteChannel} over {@code size} bytes: position, bounds, end of data and closing are
 * handled here; a subclass only copies bytes from a position into the destination.
 */
abstract class ReadOnlyChannel implements SeekableByteChannel {
  private final long size;
  private long position;
  private boolean open = true;

  ReadOnlyChannel(long size) {
    this.size = size;
  }

  /** Copy exactly {@code length} bytes starting at {@code from} into {@code dst}, advancing its position. */
  protected abstract void copy(long from, ByteBuffer dst, int length);

  @Override
  public final int read(ByteBuffer dst) throws IOException {
    if (!open) {
      throw new ClosedChannelException();
    }
    if (position >= size) {
      return dst.hasRemaining() ? -1 : 0;
    }
    int length = (int) Math.min(dst.remaining(), size - position);
    copy(position, dst, length);
    position += length;
    return length;
  }

  @Override
  public final int write(ByteBuffer src) {
    throw new NonWritableChannelException();
  }

  @Override
  public final long position() {
    return position;
  }

  @Override
  public final SeekableByteChannel position(long newPosition) {
    if (newPosition < 0) {
      throw new IllegalArgumentException("negative position " + newPosition);
    }
    position = newPosition;
    return this;
  }

  @Override
  public final long size() {
    return size;
  }

  @Override
  public final SeekableByteChannel truncate(long newSize) {
    throw new NonWritableChannelException();
  }

  @Override
  public final boolean isOpen() {
    return open;
  }

  @Override
  public final void close() {
    open = false;
  }
}
