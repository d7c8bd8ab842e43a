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

/**
 * Packs the test classes of {@code io.quorumkv.brokenbuild} into a jar with an
 * auto-configuration entry: put on a node's class path ({@code -Dloader.path}), it makes
 * a deliberately broken build of the unchanged {@code quorumkv.jar}. The entry lives only
 * in this jar, never in the test resources, so no in-JVM test ever loads it.
 */
final class BrokenBuildJar {

	private static final String IMPORTS = "META-INF/spring/org.springframework.boot.autoconfigure.AutoConfiguration.imports";

	private BrokenBuildJar() {
	}

	static Path write(Path jar) {
		Class<?> anchor = BrokenStorageAutoConfiguration.class;
		String folder = anchor.getPackageName().replace('.', '/');
		try {
			Path classes = Path.of(anchor.getProtectionDomain().getCodeSource().getLocation().toURI());
			Path packageFolder = classes.resolve(folder);
			List<Path> files;
			try (Stream<Path> list = Files.list(packageFolder)) {
				files = list.filter((p) -> p.toString().endsWith(".class")).sorted().toList();
			}
			try (OutputStream file = Files.newOutputStream(jar); JarOutputStream out = new JarOutputStream(file)) {
				for (Path path : files) {
					out.putNextEntry(new JarEntry(folder + "/" + path.getFileName()));
					out.write(Files.readAllBytes(path));
					out.closeEntry();
				}
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

}
