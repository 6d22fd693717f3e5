package dev.shardberg.router;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.shardberg.router.discovery.MySqlHost;
import java.io.ByteArrayOutputStream;
import java.io.ObjectOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SecretTest {

  @Test
  void toStringNeverShowsTheValue() {
    Secret secret = Secret.of("hunter2");
    assertThat(secret.toString()).isEqualTo("******");
    assertThat(secret.reveal()).isEqualTo("hunter2");
    MySqlHost host =
        new MySqlHost("a", "db.example", 3306, "cdc", secret, Map.of("useSSL", "true"));
    assertThat(host.toString()).doesNotContain("hunter2").contains("******");
    assertThat(host.jdbcUrl())
        .isEqualTo(
            "jdbc:mysql://db.example:3306/?tinyInt1isBit=false&useSSL=true&yearIsDateType=false")
        .doesNotContain("hunter2");
  }

  @Test
  void fromFileDropsOneTrailingLineBreak(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("pw");
    Files.writeString(file, "p@ss word\n", StandardCharsets.UTF_8);
    Secret secret = Secret.fromFile(file);
    assertThat(secret.reveal()).isEqualTo("p@ss word");
    assertThat(secret.origin()).isEqualTo("file '" + file + "'");
  }

  @Test
  void missingSourcesAreNamed(@TempDir Path dir) {
    assertThatThrownBy(() -> Secret.fromEnv("SHARDBERG_SURELY_UNSET_VARIABLE"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "Cannot read the secret from environment variable 'SHARDBERG_SURELY_UNSET_VARIABLE': it is not set; export it before starting");
    Path missing = dir.resolve("nope");
    assertThatThrownBy(() -> Secret.fromFile(missing))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "Cannot read the secret from file '"
                + missing
                + "': NoSuchFileException; check the path and its permissions");
  }

  @Test
  void serializedFormKeepsTheValueForTheTaskManagers() throws Exception {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
      out.writeObject(Secret.of("x"));
    }
    assertThat(bytes.size()).isPositive();
  }

  @Test
  void passwordCannotSneakInThroughJdbcProperties() {
    assertThatThrownBy(
            () -> new MySqlHost("a", "h", 3306, "u", Secret.of("p"), Map.of("password", "p")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "Cannot use jdbc-properties key 'password' of MySQL host 'a': set the user with sources[].user and the password with sources[].password-env or password-file");
  }
}
