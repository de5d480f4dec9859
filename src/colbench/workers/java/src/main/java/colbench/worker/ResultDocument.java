package colbench.worker;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.Map;

/** The result.json of docs/protocol.md, filled in as the case runs and written once, atomically. */
public final class ResultDocument {
  private static final ObjectMapper MAPPER = new ObjectMapper();

  private final ObjectNode doc = MAPPER.createObjectNode();
  private boolean firstSeen;

  public ResultDocument(String runtimeVersion) {
    doc.put("protocol", CaseSpec.PROTOCOL);
    doc.put("status", "ok");
    doc.putObject("samples");
    doc.putObject("warmup_samples");
    doc.putNull("first_iteration");
    doc.putNull("output");
    doc.putNull("work");
    doc.putObject("memory");
    doc.putObject("threads");
    ObjectNode allocator = doc.putObject("allocator");
    allocator.put("requested", "default");
    allocator.putNull("actual");
    ObjectNode cache = doc.putObject("cache");
    cache.put("requested", "warm");
    cache.putNull("achieved");
    doc.putObject("versions");
    ObjectNode runtime = doc.putObject("runtime");
    runtime.put("name", "java");
    runtime.put("version", runtimeVersion);
    doc.putObject("units");
    doc.putArray("warnings");
    doc.putNull("error");
  }

  /** One iteration's wall time, CPU times (when known) and metrics; the very first also becomes first_iteration. */
  public void addSample(boolean warmup, double wallSeconds, ProcessStats.CpuTimes cpu, Map<String, Double> metrics) {
    ObjectNode target = (ObjectNode) doc.get(warmup ? "warmup_samples" : "samples");
    append(target, "wall_s", wallSeconds);
    if (cpu != null) {
      append(target, "cpu_user_s", cpu.userSeconds());
      append(target, "cpu_sys_s", cpu.systemSeconds());
    }
    metrics.forEach((name, value) -> append(target, name, value));
    if (!firstSeen) {
      firstSeen = true;
      ObjectNode first = doc.putObject("first_iteration");
      first.put("wall_s", wallSeconds);
      if (cpu != null) {
        first.put("cpu_user_s", cpu.userSeconds());
        first.put("cpu_sys_s", cpu.systemSeconds());
      }
    }
  }

  private static void append(ObjectNode samples, String name, double value) {
    ArrayNode list = samples.has(name) ? (ArrayNode) samples.get(name) : samples.putArray(name);
    list.add(value);
  }

  public void unit(String metric, String unit) {
    ((ObjectNode) doc.get("units")).put(metric, unit);
  }

  public void output(Benchmark.Output output) {
    ObjectNode node = doc.putObject("output");
    putNullable(node, "rows", output.rows());
    putNullable(node, "columns", output.columns() == null ? null : output.columns().longValue());
    // the protocol's checksum is opaque text: 16 hex digits of the 64-bit value, as the Python worker writes it
    node.put("checksum", output.checksum() == null ? null : String.format("%016x", output.checksum()));
    putNullable(node, "file_size_bytes", output.fileSizeBytes());
  }

  public void work(Benchmark.Work work) {
    ObjectNode node = doc.putObject("work");
    putNullable(node, "bytes", work.bytes());
    putNullable(node, "rows", work.rows());
  }

  public void threads(int requested, Map<String, Object> applied) {
    ObjectNode node = doc.putObject("threads");
    node.put("requested", requested);
    if (applied != null) {
      node.set("applied", MAPPER.valueToTree(applied));
    }
  }

  public void allocator(String requested, String actual) {
    ObjectNode node = doc.putObject("allocator");
    node.put("requested", requested);
    node.put("actual", actual);
  }

  public void cache(String requested, String achieved) {
    ObjectNode node = doc.putObject("cache");
    node.put("requested", requested);
    node.put("achieved", achieved);
  }

  public void memory(Map<String, Object> memory) {
    doc.set("memory", MAPPER.valueToTree(memory));
  }

  public void versions(Map<String, String> versions) {
    doc.set("versions", MAPPER.valueToTree(versions));
  }

  public void runtimeDetail(String key, Object value) {
    ((ObjectNode) doc.get("runtime")).set(key, MAPPER.valueToTree(value));
  }

  /** Benchmark-specific facts: kept under "extra", beside the protocol's fields. */
  public void extra(Map<String, Object> details) {
    doc.set("extra", MAPPER.valueToTree(details));
  }

  public void warn(String message) {
    ArrayNode warnings = (ArrayNode) doc.get("warnings");
    for (var existing : warnings) {
      if (existing.asText().equals(message)) {
        return;
      }
    }
    warnings.add(message);
  }

  public void fail(String kind, Throwable error) {
    doc.put("status", "error");
    ObjectNode node = doc.putObject("error");
    node.put("kind", kind);
    String message = error.getMessage();
    node.put("message", error instanceof WorkerException || message == null
        ? (message == null ? error.getClass().getName() : message)
        : error.getClass().getSimpleName() + ": " + message);
    StringWriter trace = new StringWriter();
    error.printStackTrace(new PrintWriter(trace));
    node.put("traceback", trace.toString());
  }

  public boolean failed() {
    return "error".equals(doc.get("status").asText());
  }

  /** Write to a temporary name beside {@code path}, flush it to disk, then rename over {@code path}. */
  public void writeAtomically(Path path) throws IOException {
    Path target = path.toAbsolutePath();
    Path tmp = target.resolveSibling(target.getFileName() + ".tmp");
    byte[] bytes = MAPPER.writerWithDefaultPrettyPrinter().writeValueAsBytes(doc);
    try (FileChannel channel = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
        StandardOpenOption.TRUNCATE_EXISTING)) {
      channel.write(java.nio.ByteBuffer.wrap(bytes));
      channel.force(true);
    }
    Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
  }

  private static void putNullable(ObjectNode node, String name, Long value) {
    if (value == null) {
      node.putNull(name);
    } else {
      node.put(name, value);
    }
  }
}
