import ClinicKit
import Foundation

/// Where the PostgreSQL password comes from, as libpq finds it: `PGPASSWORD`, else the password
/// file (`PGPASSFILE`, else `~/.pgpass`). Never from the URL or a command line (refused by
/// `PostgresURL`), and never written anywhere: not to logs, not into an error's arguments.
public enum PasswordLookup {
    /// One line of a password file: `host:port:database:user:password`, `*` matching anything.
    struct Entry: Equatable {
        let host: String, port: String, database: String, user: String, password: String
    }

    /// The password for `user` on `database` at the URL's server, or nil. An unusable password
    /// file (read by others, not a regular file) is skipped and said through `warn`, like libpq.
    public static func password(for url: PostgresURL, user: String, database: String,
                                environment: [String: String], warn: (ClinicError) -> Void = { _ in }) -> String? {
        if let password = environment["PGPASSWORD"], !password.isEmpty { return password }
        guard let path = passwordFilePath(environment: environment) else { return nil }
        guard let text = readPrivateFile(path, warn: warn) else { return nil }
        // libpq's rule: a socket connection is matched as "localhost".
        let host = url.host ?? "localhost"
        return lookup(in: text, host: host, port: String(url.port), database: database, user: user)
    }

    /// `PGPASSFILE`, else `$HOME/.pgpass`.
    static func passwordFilePath(environment: [String: String]) -> String? {
        if let file = environment["PGPASSFILE"], !file.isEmpty { return file }
        let home = UserFolders.home(environment)
        return home.isEmpty ? nil : home + "/.pgpass"
    }

    /// The file's text if it is a regular file that only its owner can read; nil when it is
    /// missing (silently) or unsafe (with a warning).
    static func readPrivateFile(_ path: String, warn: (ClinicError) -> Void) -> String? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        guard (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        if info.st_mode & (S_IRWXG | S_IRWXO) != 0 {
            warn(ClinicError(.storage, .storePasswordFileInsecure, path))
            return nil
        }
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        return String(decoding: data, as: UTF8.self)
    }

    /// The first entry that matches, libpq's way: fields compared in order, `*` for any value.
    static func lookup(in text: String, host: String, port: String, database: String, user: String) -> String? {
        for line in text.split(omittingEmptySubsequences: true, whereSeparator: { $0 == "\n" || $0 == "\r\n" || $0 == "\r" }) {
            guard let entry = parse(line) else { continue }
            func matches(_ pattern: String, _ value: String) -> Bool { pattern == "*" || pattern == value }
            if matches(entry.host, host) && matches(entry.port, port) && matches(entry.database, database)
                && matches(entry.user, user) {
                return entry.password
            }
        }
        return nil
    }

    /// One line: five fields separated by `:`, `\:` and `\\` standing for `:` and `\`. A comment
    /// (`#` first) or a line with fewer fields is no entry; the password is the rest of the line.
    static func parse<S: StringProtocol>(_ line: S) -> Entry? {
        if line.hasPrefix("#") { return nil }
        var fields: [String] = []
        var current = ""
        var escaped = false
        for character in line {
            if escaped {
                current.append(character)
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else if character == ":" && fields.count < 4 {
                fields.append(current)
                current = ""
            } else {
                current.append(character)
            }
        }
        guard fields.count == 4 else { return nil }
        fields.append(current)
        return Entry(host: fields[0], port: fields[1], database: fields[2], user: fields[3], password: fields[4])
    }
}
