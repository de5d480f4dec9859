package colbench.worker;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * {@code java <jvm flags> -jar colbench-worker.jar CASE_JSON RESULT_JSON}: runs one case and writes its result
 * (docs/protocol.md). Nothing goes to stdout; a case file that cannot be read ends the process with exit code 2
 * and one line on stderr (the orchestrator records that as a {@code no-result} error). Once a result is written
 * the exit code is 0: the result's status says whether the case failed.
 */
public final class Main {
  private Main() {}

  public static void main(String[] args) {
    System.exit(run(args));
  }

  static int run(String[] args) {
    if (args.length != 2) {
      System.err.println("usage: java -jar colbench-worker.jar CASE_JSON RESULT_JSON");
      return 2;
    }
    Path casePath = Path.of(args[0]);
    Path resultPath = Path.of(args[1]);
    JsonNode doc;
    try {
      doc = new ObjectMapper().readTree(Files.readAllBytes(casePath));
    } catch (IOException e) {
      System.err.println("colbench java worker: cannot read case file " + casePath + ": " + describe(e));
      return 2;
    }
    ResultDocument result = runCase(doc);
    try {
      result.writeAtomically(resultPath);
    } catch (IOException e) {
      System.err.println("colbench java worker: cannot write result file " + resultPath + ": " + describe(e));
      return 3;
    }
    return 0;
  }

  private static ResultDocument runCase(JsonNode doc) {
    CaseSpec spec;
    try {
      spec = CaseSpec.parse(doc);
    } catch (WorkerException e) {
      ResultDocument result = new ResultDocument(VersionInfo.javaVersion());
      result.fail(e.kind(), e);
      result.versions(VersionInfo.versions());
      return result;
    }
    return new CaseRunner(FaultInjection.fromEnvironment()).run(spec);
  }

  private static String describe(IOException e) {
    String message = e.getMessage();
    String name = e.getClass().getSimpleName();
    return message == null ? name : name + ": " + message.replace('\n', ' ');
  }
}
