package io.quorumkv.service.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import io.quorumkv.service.support.NodeProcesses;

/**
 * The image's {@code /app} without a container: the {@code Dockerfile}'s build stage (the
 * jar extracted by its own {@code extract} command) and its layer copies, in its order,
 * into one folder.
 */
final class ImageLayers {

	static final Path ROOT = Path.of("..").toAbsolutePath().normalize();

	private ImageLayers() {
	}

	/**
	 * Builds {@code work/app} as the image's {@code /app} (without the entry point and
	 * the AOT cache); build steps log to {@code buildLog}.
	 */
	static Path app(Path work, Path buildLog) throws IOException, InterruptedException {
		String dockerfile = dockerfile();
		Path build = Files.createDirectories(work.resolve("build"));
		Files.copy(NodeProcesses.jar(), build.resolve("quorumkv.jar"));
		List<String> extract = words(single(dockerfile, "(?m)^RUN (java -Djarmode=tools .*)$"));
		extract.set(0, java());
		assertThat(run(new ProcessBuilder(extract).directory(build.toFile()), buildLog)).isZero();
		Path app = Files.createDirectories(work.resolve("app"));
		Matcher copies = Pattern.compile("(?m)^COPY --from=layers /build/(\\S+)/ \\./$").matcher(dockerfile);
		int layers = 0;
		while (copies.find()) {
			copyTree(build.resolve(copies.group(1)), app);
			layers++;
		}
		assertThat(layers).isEqualTo(4);
		assertThat(app.resolve("quorumkv.jar")).isRegularFile();
		return app;
	}

	static String dockerfile() throws IOException {
		return Files.readString(ROOT.resolve("Dockerfile"));
	}

	static String java() {
		return ProcessHandle.current().info().command().orElse("java");
	}

	static String single(String text, String regex) {
		Matcher matcher = Pattern.compile(regex).matcher(text);
		assertThat(matcher.find()).as("Dockerfile has %s", regex).isTrue();
		return matcher.group(1);
	}

	static List<String> words(String command) {
		return new ArrayList<>(List.of(command.trim().split("\\s+")));
	}

	static int run(ProcessBuilder builder, Path log) throws IOException, InterruptedException {
		Process process = builder.redirectErrorStream(true)
			.redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
			.start();
		assertThat(process.waitFor(180, TimeUnit.SECONDS)).as("build step %s", builder.command()).isTrue();
		return process.exitValue();
	}

	private static void copyTree(Path from, Path to) throws IOException {
		try (Stream<Path> paths = Files.walk(from)) {
			for (Path source : paths.toList()) {
				Path target = to.resolve(from.relativize(source).toString());
				if (Files.isDirectory(source)) {
					Files.createDirectories(target);
				}
				else {
					Files.copy(source, target);
				}
			}
		}
	}

}
