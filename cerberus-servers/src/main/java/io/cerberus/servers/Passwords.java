package io.cerberus.servers;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipalLookupService;
import java.nio.file.attribute.UserPrincipalNotFoundException;
import java.security.SecureRandom;
import java.util.Base64;

/**
 * Passwords of the database servers that tests, {@code cerberus check} and the bench start on
 * loopback ports: a new random one at every start, so that other users of the machine cannot log
 * in to them, and a private file to hand one to a set-up program ({@code initdb --pwfile},
 * {@code mariadbd --init-file}) without putting it on a command line.
 */
public final class Passwords {
    private static final SecureRandom RANDOM = new SecureRandom();

    private Passwords() {}

    /**
     * @return 32 URL-safe Base64 characters (192 random bits): they go into a JDBC URL and an SQL
     *     string literal as they are
     */
    public static String random() {
        byte[] bytes = new byte[24];
        RANDOM.nextBytes(bytes);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
    }

    /**
     * Writes {@code content} to a new temporary file that only its owner may read or write (mode
     * 0600). Delete it as soon as the program that reads it is done.
     *
     * @param content the text, say a password
     * @param owner the system user who is to read it when this JVM runs as root (the server's own
     *     user); otherwise the file stays this JVM's user's
     * @return the file
     * @throws ServerException if the file cannot be written or given to {@code owner}
     */
    public static Path ownerOnlyFile(String content, String owner) {
        Path file = null;
        try {
            file = Files.createTempFile(
                    "cerberus-secret-",
                    "",
                    PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
            Files.writeString(file, content, StandardCharsets.UTF_8);
            if ("root".equals(System.getProperty("user.name"))) {
                UserPrincipalLookupService users = file.getFileSystem().getUserPrincipalLookupService();
                PosixFileAttributeView view = Files.getFileAttributeView(file, PosixFileAttributeView.class);
                view.setOwner(users.lookupPrincipalByName(owner));
                view.setGroup(users.lookupPrincipalByGroupName(owner));
            }
            return file;
        } catch (IOException e) {
            if (file != null) {
                file.toFile().delete();
            }
            String why = e instanceof UserPrincipalNotFoundException
                    ? "there is no such user; its server's package creates it"
                    : e.toString();
            throw new ServerException(
                    "could not write a private file for the user " + owner + " in "
                            + System.getProperty("java.io.tmpdir") + ": " + why,
                    e);
        }
    }
}
