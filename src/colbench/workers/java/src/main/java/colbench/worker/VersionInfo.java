package colbench.worker;

import java.io.IOException;
import java.io.InputStream;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;

/** Versions of the runtime and of the libraries built into the jar (filled in by Maven at build time). */
public final class VersionInfo {
  private static final Properties BUILD = load();

  private VersionInfo() {}

  public static String javaVersion() {
    return System.getProperty("java.version");
  }

  public static Map<String, String> versions() {
    Map<String, String> versions = new LinkedHashMap<>();
    versions.put("java", javaVersion());
    versions.put("jvm", System.getProperty("java.vm.name") + " " + System.getProperty("java.vm.version"));
    versions.put("arrow", BUILD.getProperty("arrow.version", "unknown"));
    String netty = io.netty.util.Version.identify().values().stream()
        .filter(v -> v.artifactId().equals("netty-buffer")).map(io.netty.util.Version::artifactVersion)
        .findFirst().orElse(null);
    if (netty != null) {
      versions.put("netty", netty);
    }
    versions.put("jackson", com.fasterxml.jackson.databind.cfg.PackageVersion.VERSION.toString());
    versions.put("colbench-worker", BUILD.getProperty("worker.version", "unknown"));
    return versions;
  }

  private static Properties load() {
    Properties properties = new Properties();
    try (InputStream in = VersionInfo.class.getResourceAsStream("/colbench-worker.properties")) {
      if (in != null) {
        properties.load(in);
      }
    } catch (IOException e) {
      // versions then read "unknown"
    }
    return properties;
  }
}
