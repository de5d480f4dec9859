package colbench.worker;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/** What Linux (/proc) and the JVM tell about this process: CPU time, peak RSS, peak heap. */
public final class ProcessStats {
  /** USER_HZ: the unit of utime/stime in /proc/self/stat; 100 on every Linux architecture Java runs on. */
  private static final double CLOCK_TICKS_PER_SECOND = 100.0;

  private static final Path STAT = Path.of("/proc/self/stat");
  private static final Path STATUS = Path.of("/proc/self/status");

  private ProcessStats() {}

  /** User and system CPU time of the whole process so far (every thread, GC and JIT included), in clock ticks. */
  public record CpuTimes(long userTicks, long systemTicks) {
    public CpuTimes minus(CpuTimes earlier) {
      return new CpuTimes(userTicks - earlier.userTicks, systemTicks - earlier.systemTicks);
    }

    public double userSeconds() {
      return userTicks / CLOCK_TICKS_PER_SECOND;
    }

    public double systemSeconds() {
      return systemTicks / CLOCK_TICKS_PER_SECOND;
    }
  }

  /**
   * Process CPU times, or null where /proc is not there (then the protocol says: omit the CPU keys). The unit is
   * a clock tick (10 ms): iterations much shorter than that get coarse CPU samples.
   */
  public static CpuTimes cpuTimes() {
    try {
      String stat = Files.readString(STAT, StandardCharsets.US_ASCII);
      // the command name (field 2) may hold spaces and parentheses: fields restart after its last ')'
      String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
      // fields[0] is field 3 (state); utime and stime are fields 14 and 15
      return new CpuTimes(Long.parseLong(fields[11]), Long.parseLong(fields[12]));
    } catch (IOException | RuntimeException e) {
      return null;
    }
  }

  /** Peak resident set size (VmHWM), or null when unknown. */
  public static Long peakRssBytes() {
    return statusKiB("VmHWM:");
  }

  /** Minor and major page faults of the process so far, or null when unknown. */
  public static long[] pageFaults() {
    try {
      String stat = Files.readString(STAT, StandardCharsets.US_ASCII);
      String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
      return new long[] {Long.parseLong(fields[7]), Long.parseLong(fields[9])};
    } catch (IOException | RuntimeException e) {
      return null;
    }
  }

  /** Sum over the heap memory pools of their peak use since the JVM started. */
  public static long peakHeapBytes() {
    long total = 0;
    for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
      if (pool.getType() == MemoryType.HEAP && pool.getPeakUsage() != null) {
        total += pool.getPeakUsage().getUsed();
      }
    }
    return total;
  }

  private static Long statusKiB(String key) {
    try {
      for (String line : Files.readAllLines(STATUS, StandardCharsets.US_ASCII)) {
        if (line.startsWith(key)) {
          String[] parts = line.substring(key.length()).trim().split("\\s+");
          return Long.parseLong(parts[0]) * 1024L;
        }
      }
    } catch (IOException | RuntimeException e) {
      return null;
    }
    return null;
  }
}
