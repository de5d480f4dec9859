package colbench.worker.ipc;

/** Where the Arrow file is read from. */
public enum Source {
  /** One contiguous off-heap buffer; record batches are sliced out of it without copying. */
  BUFFER("buffer"),
  /** A channel over on-heap 1 MiB chunks; ArrowFileReader copies every batch into freshly allocated buffers. */
  STREAM("stream");

  private final String param;

  Source(String param) {
    this.param = param;
  }

  public String param() {
    return param;
  }
}
