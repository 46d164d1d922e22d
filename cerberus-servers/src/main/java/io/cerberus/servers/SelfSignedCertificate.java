package io.cerberus.servers;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.time.Duration;
import java.util.Base64;
import java.util.List;

/**
 * A self-signed RSA key pair for a TLS test server, made with the JDK's {@code keytool} and valid
 * for two days: the same key and certificate as a PKCS#12 store (for a Java client's trust) and as
 * PEM files (for redis-server and etcd).
 *
 * @param keyStore NAME.p12, holding the key pair under the alias NAME, with {@link #PASSWORD}
 * @param certificate NAME.crt, the PEM certificate
 * @param privateKey NAME.key, the PEM private key (PKCS#8, unencrypted)
 */
public record SelfSignedCertificate(Path keyStore, Path certificate, Path privateKey) {
    /** The password of {@link #keyStore}. */
    public static final String PASSWORD = "changeit";

    /**
     * Makes a certificate for {@code 127.0.0.1}.
     *
     * @param dir where the three files go
     * @param name the files' name and the key's alias
     * @return the files
     * @throws ServerException if keytool fails
     */
    public static SelfSignedCertificate forLoopback(Path dir, String name) {
        return create(dir, name, "CN=127.0.0.1", "ip:127.0.0.1");
    }

    /**
     * Makes a certificate.
     *
     * @param dir where the three files go
     * @param name the files' name and the key's alias
     * @param subject the distinguished name, e.g. {@code CN=127.0.0.1}
     * @param san the subject alternative name, e.g. {@code ip:127.0.0.1} or {@code dns:cache.example}
     * @return the files
     * @throws ServerException if keytool fails or its store cannot be read
     */
    public static SelfSignedCertificate create(Path dir, String name, String subject, String san) {
        Path store = dir.resolve(name + ".p12");
        Path keytool = JavaCommand.java().resolveSibling("keytool");
        ManagedProcess.run(
                "keytool",
                List.of(
                        keytool.toString(),
                        "-genkeypair",
                        "-alias",
                        name,
                        "-keyalg",
                        "RSA",
                        "-keysize",
                        "2048",
                        "-dname",
                        subject,
                        "-ext",
                        "san=" + san,
                        "-validity",
                        "2",
                        "-storetype",
                        "PKCS12",
                        "-keystore",
                        store.toString(),
                        "-storepass",
                        PASSWORD),
                Timeouts.scaled(Duration.ofSeconds(30)));
        try {
            KeyStore keys = KeyStore.getInstance("PKCS12");
            try (InputStream in = Files.newInputStream(store)) {
                keys.load(in, PASSWORD.toCharArray());
            }
            PrivateKey key = (PrivateKey) keys.getKey(name, PASSWORD.toCharArray());
            Path keyFile = Files.writeString(dir.resolve(name + ".key"), pem("PRIVATE KEY", key.getEncoded()));
            Path certificateFile = Files.writeString(
                    dir.resolve(name + ".crt"),
                    pem("CERTIFICATE", keys.getCertificate(name).getEncoded()));
            return new SelfSignedCertificate(store, certificateFile, keyFile);
        } catch (IOException | GeneralSecurityException e) {
            throw new ServerException("could not read the key pair keytool made in " + store + ": " + e, e);
        }
    }

    private static String pem(String type, byte[] der) {
        Base64.Encoder base64 = Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII));
        return "-----BEGIN " + type + "-----\n" + base64.encodeToString(der) + "\n-----END " + type + "-----\n";
    }
}
