package io.cerberus.local;

import io.cerberus.Capability;
import io.cerberus.EngineUnavailableException;
import io.cerberus.spi.EngineContext;
import io.cerberus.spi.EngineProvider;
import io.cerberus.spi.LockEngine;
import io.cerberus.spi.support.Redaction;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import java.util.EnumSet;
import java.util.Set;

/**
 * Serves {@code file:DIR}: locks shared by the processes of one machine through operating-system
 * file locks, in the directory DIR (created if missing).
 *
 * <p>URI forms: {@code file:/abs/dir}, {@code file:///abs/dir}, {@code file:relative/dir}
 * (against the working directory), and {@code file:} for the default directory
 * {@code ${java.io.tmpdir}/cerberus-${user.name}}, created private to the user. The path is taken
 * as written (no percent-decoding); queries and fragments are refused.
 */
public final class FileEngineProvider implements EngineProvider {
    static final Set<Capability> CAPABILITIES = EnumSet.of(
            Capability.FENCING,
            Capability.READ_WRITE,
            Capability.SESSION_BOUND,
            Capability.MULTI_PROCESS,
            Capability.INSPECT);
    private static final System.Logger LOG = System.getLogger(FileEngineProvider.class.getName());
    private static final String FORMS =
            "use file:/abs/dir, file:///abs/dir, file:relative/dir, or file: for the" + " default directory";

    /** For {@link java.util.ServiceLoader}. */
    public FileEngineProvider() {}

    @Override
    public Set<String> schemes() {
        return Set.of("file");
    }

    @Override
    public Set<Capability> capabilities(String scheme) {
        return CAPABILITIES;
    }

    @Override
    public LockEngine open(EngineContext context) {
        context.requireNoOptions();
        String uri = context.uri();
        Path requested = directoryOf(uri);
        boolean isDefault = requested == null;
        Path directory = isDefault ? defaultDirectory() : requested;
        Path real = prepare(uri, directory, isDefault);
        LOG.log(Level.DEBUG, "file: engine on " + real);
        return new FileEngine(real);
    }

    /**
     * @param uri a {@code file:} URI
     * @return its directory, absolute and normalised; null for the default directory
     * @throws IllegalArgumentException if the URI breaks a rule
     */
    static Path directoryOf(String uri) {
        String path = uri.substring(uri.indexOf(':') + 1);
        if (path.indexOf('?') >= 0 || path.indexOf('#') >= 0) {
            throw new IllegalArgumentException("file: URI must not have a query or fragment ('?' or '#'); " + FORMS
                    + "; was \"" + Redaction.redact(uri) + "\"");
        }
        if (path.startsWith("//")) {
            int slash = path.indexOf('/', 2);
            String authority = slash < 0 ? path.substring(2) : path.substring(2, slash);
            if (!authority.isEmpty() && !authority.equalsIgnoreCase("localhost")) {
                throw new IllegalArgumentException("file: URI must name a directory on this machine, not host '"
                        + authority + "' (did you mean file:///" + path.substring(2) + "?); " + FORMS + "; was \""
                        + Redaction.redact(uri) + "\"");
            }
            path = slash < 0 ? "" : path.substring(slash);
        }
        if (path.isEmpty()) {
            return null;
        }
        try {
            return Path.of(path).toAbsolutePath().normalize();
        } catch (InvalidPathException e) {
            throw new IllegalArgumentException(
                    "file: URI must name a valid directory path (" + e.getReason() + "); " + FORMS + "; was \""
                            + Redaction.redact(uri) + "\"",
                    e);
        }
    }

    static Path defaultDirectory() {
        String user = System.getProperty("user.name", "user").replaceAll("[^A-Za-z0-9._-]", "_");
        return Path.of(System.getProperty("java.io.tmpdir"), "cerberus-" + user)
                .toAbsolutePath()
                .normalize();
    }

    /** Creates the directory if needed and checks it is usable; returns its real path. */
    private static Path prepare(String uri, Path directory, boolean isDefault) {
        try {
            if (!Files.isDirectory(directory)) {
                if (isDefault
                        && FileSystems.getDefault()
                                .supportedFileAttributeViews()
                                .contains("posix")) {
                    // shared temporary directory: keep other users out of our lock files
                    Files.createDirectories(
                            directory,
                            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
                } else {
                    Files.createDirectories(directory);
                }
            }
            if (!Files.isWritable(directory) || !Files.isExecutable(directory)) {
                throw new IOException("it is not writable by this user");
            }
            if (isDefault) {
                checkOwnedByUs(directory);
            }
            return directory.toRealPath();
        } catch (IOException | SecurityException | UnsupportedOperationException e) {
            throw new EngineUnavailableException(
                    "file: engine cannot use directory " + directory + " (URI \""
                            + Redaction.redact(uri) + "\"): " + e
                            + "; check that the path is a directory, or can be created, and that user '"
                            + System.getProperty("user.name") + "' may create and write files in it",
                    e);
        }
    }

    /** In a shared temporary directory, a directory of that name made by another user is a trap. */
    private static void checkOwnedByUs(Path directory) throws IOException {
        if (Files.isSymbolicLink(directory)) {
            throw new IOException("the default directory is a symbolic link");
        }
        Path probe = Files.createTempFile("cerberus-owner", ".tmp");
        UserPrincipal me;
        try {
            me = Files.getOwner(probe);
        } finally {
            Files.deleteIfExists(probe);
        }
        UserPrincipal owner = Files.getOwner(directory, LinkOption.NOFOLLOW_LINKS);
        if (!owner.equals(me)) {
            throw new IOException(
                    "the default directory belongs to '" + owner.getName() + "', not to '" + me.getName() + "'");
        }
    }
}
