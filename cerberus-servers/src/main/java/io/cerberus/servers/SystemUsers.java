package io.cerberus.servers;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.UserPrincipalLookupService;
import java.nio.file.attribute.UserPrincipalNotFoundException;
import java.util.ArrayList;
import java.util.List;

/**
 * Running a server as its own system user when this JVM runs as root (PostgreSQL refuses root;
 * MariaDB should not have it): the command goes through {@code setpriv} and the server's
 * directory is given to that user. A JVM that is not root runs the server as itself, and both
 * methods leave their argument as it is.
 */
final class SystemUsers {
    private SystemUsers() {}

    /** @return whether this JVM runs as root */
    static boolean isRoot() {
        return "root".equals(System.getProperty("user.name"));
    }

    /**
     * @param user the system user, with a group of the same name (as Debian's server packages create it)
     * @param command a command
     * @return as root, the command run as {@code user} by {@code setpriv}; otherwise the command
     * @throws ServerException if setpriv is missing (naming its package, util-linux)
     */
    static List<String> runAs(String user, List<String> command) {
        if (!isRoot()) {
            return command;
        }
        List<String> wrapped = new ArrayList<>(List.of(
                Executables.require("setpriv", "util-linux").toString(),
                "--reuid=" + user,
                "--regid=" + user,
                "--init-groups",
                "--"));
        wrapped.addAll(command);
        return wrapped;
    }

    /**
     * As root, gives {@code path} to {@code user} and its group; otherwise does nothing.
     *
     * @throws ServerException if there is no such user, or the owner cannot be changed
     */
    static void give(Path path, String user) {
        if (!isRoot()) {
            return;
        }
        try {
            UserPrincipalLookupService users = path.getFileSystem().getUserPrincipalLookupService();
            PosixFileAttributeView view = Files.getFileAttributeView(path, PosixFileAttributeView.class);
            view.setOwner(users.lookupPrincipalByName(user));
            view.setGroup(users.lookupPrincipalByGroupName(user));
        } catch (UserPrincipalNotFoundException e) {
            throw new ServerException(
                    "there is no system user or group '" + user + "' to run the server as; its server's package"
                            + " creates it",
                    e);
        } catch (IOException e) {
            throw new ServerException("could not give " + path + " to the system user " + user + ": " + e, e);
        }
    }
}
