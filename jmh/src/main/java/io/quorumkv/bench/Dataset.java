package io.quorumkv.bench;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.util.stream.Stream;

import io.quorumkv.storage.Storage;
import reactor.core.publisher.Flux;

/**
 * Prefilled stores, built once per backend and key count and copied for each trial.
 *
 * <p>
 * Prefilling a million keys through H2 or Derby takes minutes, so it happens once: into
 * {@code <root>/<backend>-<keys>/data}, closed, then marked complete by
 * {@code prefill.done} (holding {@link #LAYOUT}). Every trial works on a fresh copy
 * ({@code <root>/run-<backend>-<pid>-*}), so that {@code put} trials cannot change what
 * later trials and forks read, and the copy is deleted when the trial ends. A folder
 * without its marker (an interrupted prefill) or with another layout is rebuilt; copies
 * left by dead processes are removed. The root is {@code -Dquorumkv.jmh.dir}, by default
 * {@code ${java.io.tmpdir}/quorumkv-jmh}; a file lock keeps two processes from building
 * the same folder at once.
 */
final class Dataset {

	/** Changes whenever keys, values or timestamps of the prefill change. */
	static final String LAYOUT = "quorumkv-jmh prefill v1: keys k<14 digits>0, 100-byte values, timestamps 1e6+i";

	/** Prefill timestamps start here; benchmark writes use the wall clock, far above. */
	static final long PREFILL_TIMESTAMP = 1_000_000L;

	/** Upserts in flight during the prefill (below every backend's queue bound). */
	static final int PREFILL_CONCURRENCY = 64;

	private static final String MARKER = "prefill.done";

	private static final String RUN_PREFIX = "run-";

	private Dataset() {
	}

	static Path root() {
		String configured = System.getProperty("quorumkv.jmh.dir");
		return (configured != null) ? Path.of(configured)
				: Path.of(System.getProperty("java.io.tmpdir"), "quorumkv-jmh");
	}

	/**
	 * A fresh copy of the prefilled store of {@code backend} with {@code keySpace}'s
	 * keys, building the prefilled store first if needed; the caller deletes it with
	 * {@link #delete(Path)}.
	 * @return the data folder to open the backend on
	 */
	static Path checkout(Backend backend, KeySpace keySpace) throws IOException {
		Path root = root();
		Files.createDirectories(root);
		removeStaleCopies(root);
		// A backend that opens another's files (rocksdb-lww) shares its prefilled store.
		Backend builder = backend.dataset();
		Path golden = root.resolve(builder.id() + "-" + keySpace.keys());
		try (FileChannel lockFile = FileChannel.open(root.resolve(golden.getFileName() + ".lock"),
				StandardOpenOption.CREATE, StandardOpenOption.WRITE); FileLock lock = lockFile.lock()) {
			if (!isComplete(golden)) {
				build(builder, keySpace, golden);
			}
			Path copy = Files.createTempDirectory(root,
					RUN_PREFIX + backend.id() + "-" + ProcessHandle.current().pid() + "-");
			copyTree(golden.resolve("data"), copy.resolve("data"));
			return copy.resolve("data");
		}
	}

	/** Deletes a copy made by {@link #checkout} (the folder above its data folder). */
	static void delete(Path data) throws IOException {
		deleteTree(data.getParent());
	}

	private static boolean isComplete(Path golden) throws IOException {
		Path marker = golden.resolve(MARKER);
		return Files.isRegularFile(marker) && Files.readString(marker, StandardCharsets.UTF_8).equals(LAYOUT);
	}

	private static void build(Backend backend, KeySpace keySpace, Path golden) throws IOException {
		deleteTree(golden);
		Files.createDirectories(golden);
		long start = System.nanoTime();
		try (Storage storage = backend.open(golden.resolve("data"))) {
			prefill(storage, keySpace);
		}
		Files.writeString(golden.resolve(MARKER), LAYOUT, StandardCharsets.UTF_8);
		System.out.printf("# quorumkv-jmh: prefilled %s with %,d keys in %.1f s into %s%n", backend.id(),
				keySpace.keys(), (System.nanoTime() - start) / 1e9, golden);
	}

	/**
	 * Writes every present key once, {@link #PREFILL_CONCURRENCY} upserts at a time, then
	 * flushes.
	 */
	static void prefill(Storage storage, KeySpace keySpace) {
		Flux.range(0, keySpace.keys())
			.flatMap((i) -> storage.upsert(keySpace.prefillEntry(i, PREFILL_TIMESTAMP + i)), PREFILL_CONCURRENCY)
			.then(storage.flush())
			.block(Duration.ofHours(2));
	}

	private static void removeStaleCopies(Path root) throws IOException {
		try (Stream<Path> children = Files.list(root)) {
			for (Path child : children.toList()) {
				String name = child.getFileName().toString();
				if (!name.startsWith(RUN_PREFIX)) {
					continue;
				}
				String[] parts = name.split("-");
				if (parts.length < 3) {
					continue;
				}
				try {
					long pid = Long.parseLong(parts[2]);
					if (ProcessHandle.of(pid).isEmpty()) {
						deleteTree(child);
					}
				}
				catch (NumberFormatException ex) {
					// Not one of ours.
				}
			}
		}
	}

	static void copyTree(Path from, Path to) throws IOException {
		Files.walkFileTree(from, new SimpleFileVisitor<>() {
			@Override
			public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) throws IOException {
				Files.createDirectories(to.resolve(from.relativize(dir).toString()));
				return FileVisitResult.CONTINUE;
			}

			@Override
			public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
				Files.copy(file, to.resolve(from.relativize(file).toString()), StandardCopyOption.COPY_ATTRIBUTES);
				return FileVisitResult.CONTINUE;
			}
		});
	}

	static void deleteTree(Path dir) throws IOException {
		if (!Files.exists(dir)) {
			return;
		}
		Files.walkFileTree(dir, new SimpleFileVisitor<>() {
			@Override
			public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
				Files.delete(file);
				return FileVisitResult.CONTINUE;
			}

			@Override
			public FileVisitResult postVisitDirectory(Path d, IOException ex) throws IOException {
				if (ex != null) {
					throw ex;
				}
				Files.delete(d);
				return FileVisitResult.CONTINUE;
			}
		});
	}

}
