package colbench.worker;

/**
 * Test hook: {@code COLBENCH_FAULT=setup} or {@code COLBENCH_FAULT=iteration:N} makes the worker throw where
 * named, so tests can drive the exception path of the protocol without a broken benchmark. Unset, it costs
 * nothing and does nothing.
 */
public final class FaultInjection {
  public static final String VARIABLE = "COLBENCH_FAULT";

  private final String where;

  private FaultInjection(String where) {
    this.where = where;
  }

  public static FaultInjection fromEnvironment() {
    String value = System.getenv(VARIABLE);
    return new FaultInjection(value == null || value.isBlank() ? null : value.trim());
  }

  public void atSetup() {
    if ("setup".equals(where)) {
      throw new IllegalStateException("fault injected at setup (" + VARIABLE + "=setup)");
    }
  }

  /** Before iteration {@code index} (0-based, warm-ups included). */
  public void atIteration(int index) {
    if (("iteration:" + index).equals(where)) {
      throw new IllegalStateException("fault injected before iteration " + index + " (" + VARIABLE + "=" + where + ")");
    }
  }
}
