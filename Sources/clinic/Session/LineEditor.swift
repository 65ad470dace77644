import CEdit
import ClinicKit
import Crypto
import Foundation

/// The reader libedit takes its bytes from (one session at a time has a terminal).
nonisolated(unsafe) private var editedReader: LineReader?

/// Line editing and history for the interactive session on a terminal (issue 46), with
/// libedit: arrows, Home/End and Ctrl-A/E move along the line, Up and Down go through the lines
/// typed before. Only on a terminal: piped input is read as before (`LineReader`), and so are
/// passwords, which never reach the editor or its history.
///
/// The history is kept per account (the signed-in patient's login, hashed into the file's name;
/// "guest" before a log-in) in `$XDG_STATE_HOME/clinic/history/`, mode 0600, the last 500
/// lines; only answers a prompt marks worth recalling (a place searched, a clinic's number)
/// are added: never a password, a name or an address of a registration or a profile.
final class LineEditor {
    private let editor: OpaquePointer
    private let reader: LineReader
    private let folder: String
    private var file: String?

    /// Nil where there is no terminal to edit on (or libedit cannot start).
    init?(reader: LineReader, environment: [String: String] = ProcessInfo.processInfo.environment) {
        guard isatty(reader.descriptor) == 1, isatty(STDOUT_FILENO) == 1, environment["TERM"] != "dumb" else { return nil }
        editedReader = reader
        guard let editor = clinic_editor_open("clinic", { editedReader?.nextByte() ?? -1 }) else { return nil }
        self.editor = editor
        self.reader = reader
        folder = UserFolders.state(environment) + "/history"
    }

    deinit { clinic_editor_close(editor) }

    /// A line typed with editing; `.interrupted` for Ctrl-C, `.end` for Ctrl-D on an empty line.
    func line(_ prompt: String) -> LineReader.Line {
        var length: Int32 = 0
        let pointer = clinic_editor_line(editor, prompt, &length)
        if reader.takeEditInterrupt() { return .interrupted }
        guard let pointer, length >= 0 else { return .end }
        if clinic_editor_had_invalid(editor) != 0 { return .unreadable }
        let bytes = pointer.withMemoryRebound(to: UInt8.self, capacity: Int(length)) { Array(UnsafeBufferPointer(start: $0, count: Int(length))) }
        if bytes.count > LineReader.maximumLength { return .tooLong }
        // An invalid UTF-8 sequence came through the editor as U+FFFD.
        if case .text(let text) = LineReader.decode(bytes), !text.contains("\u{FFFD}") { return .text(text) }
        return .unreadable
    }

    /// Keeps a line for Up to bring back, in this account's history file.
    func remember(_ line: String) {
        guard !line.isEmpty else { return }
        clinic_editor_remember(editor, line)
        guard let file else { return }
        _ = clinic_editor_save(editor, file)
        chmod(file, 0o600)
    }

    /// The history file's name of `login` (nil: before a log-in): no login in a file's name.
    private static func name(_ login: String?) -> String {
        login.map { login in
            SHA256.hash(data: Data(login.lowercased().utf8)).prefix(8).map { String(format: "%02x", $0) }.joined()
        } ?? "guest"
    }

    /// A deleted account's history goes with it; the guest's from then on.
    func forget(_ login: String) {
        unlink(folder + "/" + Self.name(login))
        useHistory(of: nil)
    }

    /// The history of `login` (nil: before a log-in) from now on.
    func useHistory(of login: String?) {
        let name = Self.name(login)
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        } catch {
            file = nil  // no history kept, editing still works
            _ = clinic_editor_load(editor, "/nonexistent")
            return
        }
        let path = folder + "/" + name
        // Never through a link another user placed: such a file is not read or written.
        var status = stat()
        if lstat(path, &status) == 0, (status.st_mode & S_IFMT) != S_IFREG || status.st_uid != getuid() {
            file = nil
            _ = clinic_editor_load(editor, "/nonexistent")
            return
        }
        file = path
        _ = clinic_editor_load(editor, path)
    }
}
