package colbench.worker.ipc;

import org.apache.arrow.vector.types.pojo.ArrowType;

/** The one column's type: {@code int32}, {@code int64} or {@code binary} (every value {@code value_size} bytes). */
public enum ColumnType {
  INT32("int32", new ArrowType.Int(32, true), 4),
  INT64("int64", new ArrowType.Int(64, true), 8),
  BINARY("binary", ArrowType.Binary.INSTANCE, -1);

  private final String param;
  private final ArrowType arrowType;
  private final int fixedWidth;

  ColumnType(String param, ArrowType arrowType, int fixedWidth) {
    this.param = param;
    this.arrowType = arrowType;
    this.fixedWidth = fixedWidth;
  }

  public String param() {
    return param;
  }

  public ArrowType arrowType() {
    return arrowType;
  }

  /** Value bytes per row: the fixed width, or {@code valueSize} for binary. */
  public int valueBytes(int valueSize) {
    return fixedWidth > 0 ? fixedWidth : valueSize;
  }

  public boolean isBinary() {
    return this == BINARY;
  }
}
