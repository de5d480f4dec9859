package colbench.worker.ipc;

/** How every loaded batch is consumed. */
public enum Access {
  /** Load the batches only; touch no value. */
  LAZY("lazy"),
  /** Holder API: binary reads start/end offsets only (zero-copy, as the post's holder reader); ints read the value. */
  OFFSETS("offsets"),
  /** Every value byte read in place through raw addresses (MemoryUtil), the "unsafe" reader. */
  SCAN("scan"),
  /** Default {@code get()}/{@code getObject()}: one new byte[]/Integer/Long per value, as the post's default reader. */
  MATERIALIZE("materialize");

  private final String param;

  Access(String param) {
    this.param = param;
  }

  public String param() {
    return param;
  }
}
