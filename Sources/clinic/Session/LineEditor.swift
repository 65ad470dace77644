import CEdit
import ClinicKit
import Crypto
import Foundation

/// The reader libedit takes its bytes from (one session at a time has a terminal).
nonisolated(unsafe) private var editedReader: LineReader?

/// What a prompt's answers are: Up brings back answers of the same kind only (a place at a
/// place prompt, a clinic's number at a clinic prompt), and nothing at a numbered menu.
enum HistoryKind: String {
    case place, clinic
}

/// Line editing and history for the interactive session on a terminal (issue 46), with
/// libedit: arrows, Home/End and Ctrl-A/E move along the line, Up and Down go through the lines
/// typed before. Only on a terminal: piped input is read as before (`LineReader`), and so are
/// passwords, which never reach the editor or its history.
///
/// The history is kept per account (the signed-in patient's login, hashed into the file's name;
/// "guest" before a log-in) and per kind of prompt (`HistoryKind`) in
/// `$XDG_STATE_HOME/clinic/history/`, files of mode 0600 in a folder of mode 0700, the last 500
/// lines of each; only answers that found something at a prompt that marks them worth recalling
/// (a place that was found, a clinic that exists) are added: never a password, a name or an
/// address of a registration or a profile, nor a search that failed (issue 55). A folder that
/// is a link, is not the user's, or is open to others keeps no history (the session says so).
final class LineEditor {
    private let editor: OpaquePointer
    private let reader: LineReader
    private let folder: String
    /// The account's part of the files' names; nil: no history kept (the folder is unsafe).
    private var account: String?
    /// The kind whose history libedit holds now (`.some(nil)`: none, a numbered menu).
    private var loaded: HistoryKind??
    private var warned = false

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

    /// A line typed with editing, Up and Down going through `kind`'s history (none: nothing to
    /// go through); `.interrupted` for Ctrl-C, `.end` for Ctrl-D on an empty line.
    func line(_ prompt: String, history kind: HistoryKind?) -> LineReader.Line {
        load(kind)
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

    /// Keeps a line that found something for Up to bring back at prompts of `kind`, in this
    /// account's file of that kind.
    func remember(_ line: String, as kind: HistoryKind) {
        guard !line.isEmpty else { return }
        load(kind)
        clinic_editor_remember(editor, line)
        guard let file = file(kind), safeFile(file) else { return }
        _ = clinic_editor_save(editor, file)
        chmod(file, 0o600)
    }

    /// The history file's name of `login` (nil: before a log-in): no login in a file's name.
    private static func name(_ login: String?) -> String {
        login.map { login in
            SHA256.hash(data: Data(login.lowercased().utf8)).prefix(8).map { String(format: "%02x", $0) }.joined()
        } ?? "guest"
    }

    /// `kind`'s file of the account (places keep the name they had before kinds).
    private func file(_ kind: HistoryKind) -> String? {
        account.map { folder + "/" + $0 + (kind == .place ? "" : "." + kind.rawValue) }
    }

    /// Loads `kind`'s history into libedit, unless it holds it already.
    private func load(_ kind: HistoryKind?) {
        if let loaded, loaded == kind { return }
        let path = kind.flatMap(file).flatMap { safeFile($0) ? $0 : nil } ?? "/nonexistent"
        _ = clinic_editor_load(editor, path)
        loaded = .some(kind)
    }

    /// Never through a link another user placed: such a file is not read or written.
    private func safeFile(_ path: String) -> Bool {
        var status = stat()
        guard lstat(path, &status) == 0 else { return errno == ENOENT }
        return (status.st_mode & S_IFMT) == S_IFREG && status.st_uid == getuid()
    }

    /// A deleted account's history goes with it; the guest's from then on.
    func forget(_ login: String) {
        let name = Self.name(login)
        for kind in [HistoryKind.place, .clinic] {
            unlink(folder + "/" + name + (kind == .place ? "" : "." + kind.rawValue))
        }
        _ = useHistory(of: nil)
    }

    /// The history of `login` (nil: before a log-in) from now on. The folder is made 0700 when
    /// missing; one that is a link, not the user's, or open to group or others keeps no history,
    /// and the first time that is found the folder is returned, for the session to say so.
    @discardableResult
    func useHistory(of login: String?) -> String? {
        loaded = nil
        account = nil
        try? FileManager.default.createDirectory(atPath: (folder as NSString).deletingLastPathComponent,
                                                 withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        if mkdir(folder, 0o700) != 0 && errno != EEXIST { return nil }  // no history kept, editing still works
        var status = stat()
        guard lstat(folder, &status) == 0, (status.st_mode & S_IFMT) == S_IFDIR, status.st_uid == getuid(),
              status.st_mode & 0o077 == 0 else {
            defer { warned = true }
            return warned ? nil : folder
        }
        account = Self.name(login)
        return nil
    }
}
