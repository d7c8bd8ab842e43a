package io.quorumkv.usage;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import io.quorumkv.client.TestNodes;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The client as users take it: {@link Hello}, built by this module from client-bom and
 * client alone, run in its own JVM against a real node with nothing else on its class
 * path; and the same program run from source with client-all alone.
 */
class ClientUsageTest {

	private static TestNodes nodes;

	@BeforeAll
	static void start() throws IOException {
		nodes = TestNodes.start(1, Map.of());
	}

	@AfterAll
	static void stop() throws IOException {
		if (nodes != null) {
			nodes.close();
		}
	}

	@Test
	void runsWithTheBomAndTheClientAlone() throws Exception {
		List<String> classPath = new ArrayList<>(jars("usage.classpath"));
		classPath.add(0, Path.of("target", "classes").toAbsolutePath().toString());
		Run run = java("-cp", String.join(File.pathSeparator, classPath), Hello.class.getName(),
				nodes.url(0).toString());
		assertThat(run.output()).contains("hello = world");
		assertThat(run.exit()).isZero();
	}

	/**
	 * The script's way: {@code java -cp client-all.jar Hello.java}, compiled from source
	 * by the launcher against the one jar and run with nothing else.
	 */
	@Test
	void runsFromSourceWithClientAllAlone() throws Exception {
		Path jar = Path.of(System.getProperty("client-all.jar"));
		assertThat(jar).as("client-all's jar: run this through the package phase (./mvnw verify)").isRegularFile();
		Path source = Path.of("src", "main", "java", "io", "quorumkv", "usage", "Hello.java").toAbsolutePath();
		Run run = java("-cp", jar.toString(), source.toString(), nodes.url(0).toString());
		assertThat(run.output()).contains("hello = world");
		assertThat(run.exit()).isZero();
	}

	/**
	 * client-bom gives an application the very jars the client is built and tested with
	 * under the root pom (Boot's management and the root's pins): a version the BOM lacks
	 * or states otherwise shows here.
	 */
	@Test
	void theBomResolvesTheJarsTheClientIsTestedWith() throws IOException {
		Set<String> usage = names(jars("usage.classpath"));
		// The client itself: its jar, or its classes folder in a reactor build short of
		// package.
		usage.removeIf((name) -> name.startsWith("client-") || name.equals("classes"));
		assertThat(usage).isEqualTo(names(jars("client.classpath")));
	}

	static List<String> jars(String property) throws IOException {
		String text = Files.readString(Path.of(System.getProperty(property))).strip();
		return text.isEmpty() ? List.of() : Arrays.asList(text.split(File.pathSeparator));
	}

	private static Set<String> names(List<String> jars) {
		return jars.stream()
			.map((jar) -> Path.of(jar).getFileName().toString())
			.collect(Collectors.toCollection(TreeSet::new));
	}

	/** Runs {@code java} with these arguments, for at most a minute. */
	static Run java(String... arguments) throws IOException, InterruptedException {
		List<String> command = new ArrayList<>();
		command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
		command.addAll(List.of(arguments));
		Path log = Files.createTempFile("usage", ".log");
		Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
		try {
			if (!process.waitFor(60, TimeUnit.SECONDS)) {
				process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
				return new Run(-1, "(timed out) " + Files.readString(log, StandardCharsets.UTF_8));
			}
			return new Run(process.exitValue(), Files.readString(log, StandardCharsets.UTF_8));
		}
		finally {
			process.destroyForcibly();
			Files.deleteIfExists(log);
		}
	}

	record Run(int exit, String output) {

	}

}
