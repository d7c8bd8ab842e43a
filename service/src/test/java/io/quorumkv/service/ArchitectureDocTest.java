package io.quorumkv.service;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The package table of {@code docs/architecture.md} is the service's imports: every
 * package, what it imports and what imports it. A moved class that adds or removes an
 * arrow fails here until the table says so.
 */
class ArchitectureDocTest {

	private static final Path SOURCES = Path.of("src/main/java/io/quorumkv/service");

	private static final Path DOC = Path.of("../docs/architecture.md");

	private static final Pattern IMPORT = Pattern.compile("^import (?:static )?io\\.quorumkv\\.service\\.([a-z]+)\\.",
			Pattern.MULTILINE);

	private static final Pattern ROW = Pattern.compile("^\\| `([a-z]+)` \\| ([^|]*) \\| ([^|]*) \\|$",
			Pattern.MULTILINE);

	@Test
	void thePackageTableHasEveryArrowOfTheImports() throws IOException {
		Map<String, Set<String>> imports = imports();
		Map<String, Set<String>> importedBy = new TreeMap<>();
		imports.keySet().forEach((name) -> importedBy.put(name, new TreeSet<>()));
		imports.forEach((from, targets) -> targets.forEach((to) -> importedBy.get(to).add(from)));

		Map<String, Set<String>> tableImports = new TreeMap<>();
		Map<String, Set<String>> tableImportedBy = new TreeMap<>();
		Matcher row = ROW.matcher(Files.readString(DOC));
		while (row.find()) {
			tableImports.put(row.group(1), names(row.group(2), imports.keySet()));
			tableImportedBy.put(row.group(1), names(row.group(3), imports.keySet()));
		}
		assertThat(tableImports).as("imports, by package").isEqualTo(imports);
		assertThat(tableImportedBy).as("imported by, by package").isEqualTo(importedBy);
	}

	/** Every package of the service and the other packages its classes import. */
	private static Map<String, Set<String>> imports() throws IOException {
		Map<String, Set<String>> imports = new TreeMap<>();
		try (Stream<Path> packages = Files.list(SOURCES)) {
			for (Path folder : packages.filter(Files::isDirectory).toList()) {
				String name = folder.getFileName().toString();
				Set<String> targets = new TreeSet<>();
				try (Stream<Path> files = Files.list(folder)) {
					for (Path file : files.filter((path) -> path.toString().endsWith(".java")).toList()) {
						Matcher imported = IMPORT.matcher(Files.readString(file));
						while (imported.find()) {
							targets.add(imported.group(1));
						}
					}
				}
				targets.remove(name);
				imports.put(name, targets);
			}
		}
		return imports;
	}

	/** The package names of a cell, words in parentheses (comments) left out. */
	private static Set<String> names(String cell, Set<String> packages) {
		Set<String> names = new TreeSet<>();
		for (String word : cell.replaceAll("\\([^)]*\\)", " ").split("[^a-z]+")) {
			if (packages.contains(word)) {
				names.add(word);
			}
		}
		return names;
	}

}
