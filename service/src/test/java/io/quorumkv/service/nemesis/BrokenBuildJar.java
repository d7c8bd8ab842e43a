package io.quorumkv.service.nemesis;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.stream.Stream;

import io.quorumkv.brokenbuild.BrokenStorageAutoConfiguration;
import io.quorumkv.service.paxos.BrokenPaxos;

/**
 * Packs the test classes of {@code io.quorumkv.brokenbuild} (and {@link BrokenPaxos})
 * into a jar with an auto-configuration entry: put on a node's class path
 * ({@code -Dloader.path}), it makes a deliberately broken build of the unchanged
 * {@code quorumkv.jar}. The entry lives only in this jar, never in the test resources, so
 * no in-JVM test ever loads it.
 */
final class BrokenBuildJar {

	private static final String IMPORTS = "META-INF/spring/org.springframework.boot.autoconfigure.AutoConfiguration.imports";

	private BrokenBuildJar() {
	}

	static Path write(Path jar) {
		Class<?> anchor = BrokenStorageAutoConfiguration.class;
		try {
			Path classes = Path.of(anchor.getProtectionDomain().getCodeSource().getLocation().toURI());
			try (OutputStream file = Files.newOutputStream(jar); JarOutputStream out = new JarOutputStream(file)) {
				pack(out, classes, anchor.getPackageName(), "");
				// In the package of the Paxos beans it replaces (package-private).
				pack(out, classes, BrokenPaxos.class.getPackageName(), BrokenPaxos.class.getSimpleName());
				out.putNextEntry(new JarEntry(IMPORTS));
				out.write((anchor.getName() + "\n").getBytes(StandardCharsets.UTF_8));
				out.closeEntry();
			}
			return jar;
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		catch (URISyntaxException ex) {
			throw new IllegalStateException(ex);
		}
	}

	/** The classes of {@code packageName} whose names start with {@code prefix}. */
	private static void pack(JarOutputStream out, Path classes, String packageName, String prefix) throws IOException {
		String folder = packageName.replace('.', '/');
		List<Path> files;
		try (Stream<Path> list = Files.list(classes.resolve(folder))) {
			files = list.filter((p) -> p.getFileName().toString().startsWith(prefix))
				.filter((p) -> p.toString().endsWith(".class"))
				.sorted()
				.toList();
		}
		for (Path path : files) {
			out.putNextEntry(new JarEntry(folder + "/" + path.getFileName()));
			out.write(Files.readAllBytes(path));
			out.closeEntry();
		}
	}

}
