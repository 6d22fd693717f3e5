package dev.shardberg.tests.cluster;

import java.io.IOException;
import java.io.OutputStream;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.jar.Attributes;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import java.util.stream.Stream;

/**
 * Packs a compiled test class and its nested classes into a job jar whose manifest names it as
 * Main-Class.
 */
final class TestJars {

  private TestJars() {}

  static Path jobJar(Class<?> mainClass, Path dir) throws IOException {
    Path classesRoot;
    try {
      classesRoot = Path.of(mainClass.getProtectionDomain().getCodeSource().getLocation().toURI());
    } catch (URISyntaxException e) {
      throw new IOException("Cannot locate the classes of " + mainClass.getName(), e);
    }
    String packagePath = mainClass.getPackageName().replace('.', '/');
    Path packageDir = classesRoot.resolve(packagePath);
    List<Path> classFiles;
    try (Stream<Path> files = Files.list(packageDir)) {
      classFiles =
          files
              .filter(
                  f -> {
                    String name = f.getFileName().toString();
                    return name.equals(mainClass.getSimpleName() + ".class")
                        || name.startsWith(mainClass.getSimpleName() + "$");
                  })
              .sorted()
              .toList();
    }
    Manifest manifest = new Manifest();
    manifest.getMainAttributes().put(Attributes.Name.MANIFEST_VERSION, "1.0");
    manifest.getMainAttributes().put(Attributes.Name.MAIN_CLASS, mainClass.getName());
    Path jar = Files.createDirectories(dir).resolve(mainClass.getSimpleName() + ".jar");
    try (OutputStream file = Files.newOutputStream(jar);
        JarOutputStream out = new JarOutputStream(file, manifest)) {
      for (Path classFile : classFiles) {
        out.putNextEntry(new JarEntry(packagePath + "/" + classFile.getFileName()));
        Files.copy(classFile, out);
        out.closeEntry();
      }
    }
    return jar;
  }
}
