package colbench.worker.ipc;

/**
 * The deterministic data of one thread, a pure function of (row, seed), so tests and other runtimes can
 * recompute every value and checksum. Thread {@code t} uses seed {@code s = seed + t}; {@code i} is the row
 * within the thread (0-based), all arithmetic wraps as two's complement.
 *
 * <ul>
 *   <li>int32: {@code (int) (i * 0x9E3779B1 + s)} (the low 32 bits)
 *   <li>int64: {@code i * 0x9E3779B97F4A7C15 + s}
 *   <li>binary: {@code value_size} bytes; byte {@code j} is the top byte of the 32-bit hash of its position in
 *       the thread's payload, {@code (int) ((i * value_size + j) * 0x9E3779B1 + s) >>> 24}
 * </ul>
 */
public final class ValuePattern {
  static final long K32 = 0x9E3779B1L;
  static final long K64 = 0x9E3779B97F4A7C15L;

  private ValuePattern() {}

  public static long threadSeed(long seed, int thread) {
    return seed + thread;
  }

  public static int int32(long row, long seed) {
    return (int) (row * K32 + seed);
  }

  public static long int64(long row, long seed) {
    return row * K64 + seed;
  }

  /** Fill {@code dst} with the value of {@code row}. */
  public static void binary(byte[] dst, long row, long seed) {
    long position = row * dst.length;
    for (int j = 0; j < dst.length; j++) {
      dst[j] = (byte) ((int) ((position + j) * K32 + seed) >>> 24);
    }
  }
}
