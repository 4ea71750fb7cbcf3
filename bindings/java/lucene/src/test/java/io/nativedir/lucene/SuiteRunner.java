package io.nativedir.lucene;

import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.runner.Description;
import org.junit.runner.JUnitCore;
import org.junit.runner.Result;
import org.junit.runner.notification.Failure;
import org.junit.runner.notification.RunListener;

/**
 * Runs Lucene's test classes under plain JUnit 4 and writes every test's outcome, one line each
 * ("class#method<TAB>PASS|FAIL|SKIP|IGNORED"), so two runs (two directory classes) can be compared
 * test by test. Lucene's randomized runner reports a class that fails as a whole (its class rules:
 * leaked threads or files) as a failure of the class itself ("class#").
 *
 * <p>Usage: {@code SuiteRunner OUT CLASSES_DIR PACKAGE...}: every concrete public class named
 * Test* in those packages (not their sub-packages) of the compiled classes folder.
 */
public final class SuiteRunner {
  private SuiteRunner() {}

  public static void main(String[] args) throws Exception {
    if (args.length < 3) {
      System.err.println("usage: SuiteRunner OUT CLASSES_DIR PACKAGE...");
      System.exit(2);
    }
    Path out = Paths.get(args[0]);
    Path classes = Paths.get(args[1]);
    List<Class<?>> tests = new ArrayList<>();
    for (int i = 2; i < args.length; i++) {
      String pkg = args[i];
      Path dir = classes.resolve(pkg.replace('.', '/'));
      List<String> names;
      try (Stream<Path> files = Files.list(dir)) {
        names = files.map(p -> p.getFileName().toString())
            .filter(n -> n.startsWith("Test") && n.endsWith(".class") && !n.contains("$"))
            .map(n -> pkg + "." + n.substring(0, n.length() - ".class".length()))
            .sorted()
            .collect(Collectors.toList());
      }
      for (String name : names) {
        Class<?> c = Class.forName(name, false, SuiteRunner.class.getClassLoader());
        int m = c.getModifiers();
        if (java.lang.reflect.Modifier.isPublic(m) && !java.lang.reflect.Modifier.isAbstract(m)) {
          tests.add(c);
        }
      }
    }
    Map<String, String> outcomes = new TreeMap<>();
    Map<String, Long> started = new java.util.HashMap<>();
    Map<String, Long> classNanos = new TreeMap<>();
    JUnitCore core = new JUnitCore();
    core.addListener(new RunListener() {
      @Override
      public void testStarted(Description d) {
        outcomes.put(key(d), "PASS");
        started.put(key(d), System.nanoTime());
      }

      @Override
      public void testFinished(Description d) {
        Long t0 = started.remove(key(d));
        if (t0 != null) {
          classNanos.merge(d.getClassName(), System.nanoTime() - t0, Long::sum);
        }
      }

      @Override
      public void testFailure(Failure f) {
        outcomes.put(key(f.getDescription()), "FAIL");
        System.out.println("FAIL " + key(f.getDescription()) + ": " + firstLine(f));
      }

      @Override
      public void testAssumptionFailure(Failure f) {
        outcomes.put(key(f.getDescription()), "SKIP");
      }

      @Override
      public void testIgnored(Description d) {
        outcomes.put(key(d), "IGNORED");
      }
    });
    long start = System.nanoTime();
    Result r = core.run(tests.toArray(new Class<?>[0]));
    try (PrintWriter w = new PrintWriter(Files.newBufferedWriter(out, StandardCharsets.UTF_8))) {
      for (Map.Entry<String, String> e : outcomes.entrySet()) {
        w.println(e.getKey() + "\t" + e.getValue());
      }
    }
    classNanos.entrySet().stream()
        .sorted(Map.Entry.<String, Long>comparingByValue().reversed())
        .limit(12)
        .forEach(e -> System.out.printf("  %6.1f s  %s%n", e.getValue() / 1e9, e.getKey()));
    System.out.printf("%d classes, %d tests, %d failures, %d ignored in %.0f s%n", tests.size(),
        r.getRunCount(), r.getFailureCount(), r.getIgnoreCount(), (System.nanoTime() - start) / 1e9);
    System.exit(0); // outcomes are compared by the next step; a failure here is one of them
  }

  private static String key(Description d) {
    String cls = d.getClassName();
    String m = d.getMethodName();
    if (m == null) {
      return cls + "#";
    }
    int seed = m.indexOf(" {seed=");
    return cls + "#" + (seed >= 0 ? m.substring(0, seed) : m);
  }

  private static String firstLine(Failure f) {
    String s = String.valueOf(f.getException());
    int nl = s.indexOf('\n');
    return nl >= 0 ? s.substring(0, nl) : s;
  }
}
