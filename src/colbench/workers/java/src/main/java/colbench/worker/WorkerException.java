package colbench.worker;

/** A failure with a protocol error kind: {@code invalid} (the case asks for something we cannot do) or {@code check}. */
public final class WorkerException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final String kind;

  private WorkerException(String kind, String message) {
    super(message);
    this.kind = kind;
  }

  public static WorkerException invalid(String message) {
    return new WorkerException("invalid", message);
  }

  public static WorkerException check(String message) {
    return new WorkerException("check", message);
  }

  public String kind() {
    return kind;
  }
}
