package colbench.worker;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;

/** The orchestrator's case.json, read once: what to run, how often, with which params (docs/protocol.md). */
public final class CaseSpec {
  public static final int PROTOCOL = 1;

  private final String benchmark;
  private final Params params;
  private final int iterations;
  private final int warmup;
  private final int threads;
  private final long seed;
  private final String allocator;
  private final String cache;

  private CaseSpec(JsonNode doc) {
    JsonNode protocol = doc.get("protocol");
    if (protocol == null || !protocol.canConvertToInt() || protocol.asInt() != PROTOCOL) {
      throw WorkerException.invalid("case protocol " + protocol + "; this worker speaks " + PROTOCOL);
    }
    benchmark = requiredText(doc, "benchmark");
    JsonNode paramsNode = doc.get("params");
    if (paramsNode == null || !paramsNode.isObject()) {
      throw WorkerException.invalid("case has no params object");
    }
    params = new Params((ObjectNode) paramsNode);
    iterations = nonNegativeInt(doc, "iterations", -1);
    if (iterations < 1) {
      throw WorkerException.invalid("case needs iterations >= 1");
    }
    warmup = nonNegativeInt(doc, "warmup", 0);
    threads = nonNegativeInt(doc, "threads", 1);
    seed = doc.has("seed") ? asLong(doc.get("seed"), "seed") : 0L;
    allocator = doc.path("allocator").asText(params.text("allocator", "default"));
    cache = doc.path("cache").asText(params.text("cache", "warm"));
  }

  public static CaseSpec parse(JsonNode doc) {
    if (doc == null || !doc.isObject()) {
      throw WorkerException.invalid("case.json is not a JSON object");
    }
    return new CaseSpec(doc);
  }

  public String benchmark() {
    return benchmark;
  }

  public Params params() {
    return params;
  }

  public int iterations() {
    return iterations;
  }

  public int warmup() {
    return warmup;
  }

  /** The top-level thread count; the protocol says it equals {@code params.threads}. */
  public int threads() {
    return threads;
  }

  public long seed() {
    return seed;
  }

  public String allocator() {
    return allocator;
  }

  public String cache() {
    return cache;
  }

  private static String requiredText(JsonNode doc, String name) {
    JsonNode node = doc.get(name);
    if (node == null || !node.isTextual()) {
      throw WorkerException.invalid("case has no text field " + name);
    }
    return node.asText();
  }

  private static int nonNegativeInt(JsonNode doc, String name, int missing) {
    JsonNode node = doc.get(name);
    if (node == null || node.isNull()) {
      return missing;
    }
    if (!node.canConvertToInt() || !node.isIntegralNumber() || node.asInt() < 0) {
      throw WorkerException.invalid("case field " + name + " must be a non-negative integer, not " + node);
    }
    return node.asInt();
  }

  static long asLong(JsonNode node, String name) {
    if (node == null || !node.isIntegralNumber() || !node.canConvertToLong()) {
      throw WorkerException.invalid(name + " must be an integer, not " + node);
    }
    return node.asLong();
  }

  /** The case's params; a benchmark takes the ones it knows and refuses the rest. */
  public static final class Params {
    private final ObjectNode node;

    Params(ObjectNode node) {
      this.node = node;
    }

    public boolean has(String name) {
      return node.has(name) && !node.get(name).isNull();
    }

    public String text(String name, String missing) {
      JsonNode value = node.get(name);
      if (value == null || value.isNull()) {
        return missing;
      }
      if (!value.isTextual()) {
        throw WorkerException.invalid("param " + name + " must be text, not " + value);
      }
      return value.asText();
    }

    public long integer(String name, long missing) {
      JsonNode value = node.get(name);
      return value == null || value.isNull() ? missing : asLong(value, "param " + name);
    }

    public List<String> names() {
      List<String> names = new ArrayList<>();
      for (Iterator<String> it = node.fieldNames(); it.hasNext(); ) {
        names.add(it.next());
      }
      return names;
    }
  }
}
