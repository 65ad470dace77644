import ArgumentParser
import ClinicImages
import ClinicPDF
import ClinicKit
import ClinicTransports
import ClinicStoreSQLite
import Foundation

/// Options every command takes.
struct GlobalOptions: ParsableArguments, Sendable {
    @Option(name: .long, help: ArgumentHelp(
        "Database: a SQLite file, or a PostgreSQL URL postgresql://user@host:port/dbname?sslmode=verify-full (every command but a file's own: backup, restore, rotate-key; the password from PGPASSWORD or ~/.pgpass, never in the URL) (env CLINIC_DB).",
        valueName: "path|url"))
    var db: String?

    @Flag(name: .long, help: "Print JSON on stdout (errors as JSON on stderr).")
    var json = false

    @Option(name: .long, help: ArgumentHelp("Language of messages: en or ru.", valueName: "lang"))
    var lang: Language?
}

/// What a command needs from its surroundings: the environment, the language, the database,
/// the terminal and the session file. Built from the global options; the commands do the rest.
struct Context: Sendable {
    let options: GlobalOptions
    let environment: [String: String]
    let terminal: Terminal

    init(_ options: GlobalOptions, environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.options = options
        self.environment = environment
        terminal = Terminal()
    }

    /// `--lang`, then the logged-in patient's saved language (once the session is known), then
    /// `CLINIC_LANG`, `LC_ALL`, `LANG`, then English.
    var language: Language {
        options.lang ?? SavedLanguage.shared.value ?? Language.fromEnvironment(environment)
    }

    var json: Bool { options.json }

    var databasePath: String {
        if let path = options.db, !path.isEmpty { return path }
        if let path = environment["CLINIC_DB"], !path.isEmpty { return path }
        if let data = environment["XDG_DATA_HOME"], !data.isEmpty { return data + "/clinic/clinic.sqlite" }
        let home = UserFolders.home(environment)
        return home + "/.local/share/clinic/clinic.sqlite"
    }

    /// The database setting read as a store: a SQLite file, or a PostgreSQL URL; a URL of any
    /// other kind is refused (`store_url_invalid`), never taken for a file name.
    func storeLocation() throws -> StoreLocation { try StoreLocation.parse(databasePath) }

    var sessionFile: SessionFile { SessionFile.location(environment: environment) }

    /// Opens the database. With `migrate`, brings its schema up to date; with `initialize`,
    /// fills a database that was never filled with the default directory (first use).
    /// On PostgreSQL (a URL) the store is opened with `connections` in its pool (a server
    /// wants one per thread that may hold a transaction); `migrate` brings its schema up to
    /// date as on SQLite (under PostgreSQL's advisory lock: servers starting together migrate
    /// once).
    func system(migrate: Bool = true, initialize: Bool = true, connections: Int = 2) throws -> ClinicSystem {
        let resources = try Resources.locate(environment: environment)
        if case .postgres(let url) = try storeLocation() {
            let store = try PostgresAdmin.open(self, url, resources: resources, connections: connections, migrate: migrate)
            let system = ClinicSystem(store: store, resources: resources, remoteGeocoder: remoteGeocoder(), images: VipsImageProcessor(),
                                      pdfs: QPDFChecker(), codeLimits: try CodeLimits.from(environment: environment))
            try initializeIfNew(system, initialize)
            return system
        }
        let migrations = try Migration.load(from: resources.migrations)
        let database = try SQLiteStore.open(path: databasePath, migrations: migrations, migrate: migrate,
                                                zones: LazyZones(data: resources.data))
        let system = ClinicSystem(store: database, resources: resources, remoteGeocoder: remoteGeocoder(),
                                  images: VipsImageProcessor(), pdfs: QPDFChecker(),
                                  codeLimits: try CodeLimits.from(environment: environment))
        noteZoneChanges(system)
        try initializeIfNew(system, initialize)
        if migrate && !database.isReadOnly {
            // A due automatic backup; its failure is reported, not turned into the command's.
            do {
                try AutomaticBackups.fromEnvironment(environment)?.runIfDue(database)
            } catch let error as ClinicError {
                terminal.note(Strings.text(.autoBackupFailed, language, [error.message(in: language)]))
            }
        }
        return system
    }

    /// `system()` for an awaited command (`AsyncEdge`): a PostgreSQL store opened, migrated and
    /// its first use looked for with no thread waiting for a statement; a SQLite file as
    /// `system()` opens it (GRDB's transactions are synchronous inside).
    func awaitedSystem() async throws -> ClinicSystem {
        guard case .postgres(let url) = try storeLocation() else { return try system() }
        let resources = try Resources.locate(environment: environment)
        let store = try await PostgresAdmin.opened(self, url, resources: resources, connections: 2, migrate: true)
        let system = ClinicSystem(store: store, resources: resources, remoteGeocoder: remoteGeocoder(), images: VipsImageProcessor(),
                                  pdfs: QPDFChecker(), codeLimits: try CodeLimits.from(environment: environment))
        // The first use's fill (once per database, a whole directory) is the one blocking import.
        if try await system.initialization() == nil { try initializeIfNew(system, true) }
        return system
    }

    /// Fills a store that was never filled with the default directory (first use).
    func initializeIfNew(_ system: ClinicSystem, _ initialize: Bool) throws {
        guard initialize, try system.initialization() == nil else { return }
        if terminal.stderrIsTerminal { terminal.note(Strings.text(.loadingDirectory, language)) }
        try withProgress { progress in try system.initialize(.defaultDirectory, progress: progress) }
    }

    /// "Using Vincennes, Indiana, US; also: Vincennes, Île-de-France, FR — type 'Vincennes, FR'."
    func ambiguityText(_ result: GeocodeResult) -> String {
        let others = result.alternatives.prefix(3).map { text(.geocodeAlternative, $0.name, $0.hint ?? $0.name) }
        return text(.geocodeAmbiguous, result.placeName ?? result.query, others.joined(separator: "; "))
    }

    /// Says on stderr which place an ambiguous address was taken for, and how to pick another
    /// (human output only: `--json` carries the alternatives where it carries the place).
    func noteAmbiguity(_ result: GeocodeResult?) {
        guard !json, let result, result.isAmbiguous else { return }
        terminal.note(ambiguityText(result))
    }

    /// After the migration that recomputed clinic zones ran here: how many upcoming
    /// appointments were booked at clinics whose zone changed (`admin check` lists them).
    func noteZoneChanges(_ system: ClinicSystem) {
        guard let moved = try? system.appointmentsMovedByThisRunsZoneChange(), !moved.isEmpty else { return }
        terminal.note(text(.zoneChangesNote, Noun.appointment.count(moved.count, language)))
    }

    /// The HTTP geocoder, when `CLINIC_GEOCODER_URL` names one (`CLINIC_GEOCODER_TIMEOUT` in
    /// seconds, default 5). Its one-request-per-second pace is shared through a file beside
    /// the database (`geocoderPaceFile`).
    /// A malformed setting is reported when the geocoder is needed, not by every command.
    func remoteGeocoder() -> (any Geocoder)? {
        guard let text = environment["CLINIC_GEOCODER_URL"], !text.isEmpty else { return nil }
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
              url.host != nil else {
            return MisconfiguredGeocoder(error: ClinicError.invalid(.geocoderSetting, "CLINIC_GEOCODER_URL", text))
        }
        var timeout = 5.0
        if let value = environment["CLINIC_GEOCODER_TIMEOUT"] {
            guard let seconds = Double(value), seconds > 0, seconds <= 60 else {
                return MisconfiguredGeocoder(error: ClinicError.invalid(.geocoderSetting, "CLINIC_GEOCODER_TIMEOUT", value))
            }
            timeout = seconds
        }
        return NominatimGeocoder(baseURL: url, timeout: timeout, rateFile: geocoderPaceFile())
    }

    /// Where the processes of this machine share the geocoder's pace: beside a SQLite file; for
    /// a PostgreSQL database (no file to sit beside) in `$XDG_STATE_HOME/clinic/<database>.geocoder`
    /// (`~/.local/state/…`), its folder made if missing; nil (this process paces alone) if it
    /// cannot be.
    func geocoderPaceFile() -> String? {
        guard case .postgres(let url)? = try? storeLocation() else { return databasePath + ".geocoder" }
        let folder = UserFolders.state(environment)
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        } catch {
            return nil
        }
        let name = (url.database ?? url.user ?? "clinic").replacingOccurrences(of: "/", with: "_")
        return folder + "/" + name + ".geocoder"
    }

    /// Opens the database and finds the logged-in patient (`not_logged_in` without one).
    func signedIn() throws -> (system: ClinicSystem, client: Client) {
        let system = try self.system()
        return (system, try currentClient(system).client)
    }

    /// `signedIn()` awaited: the store opened awaited and the session looked up awaited.
    func awaitedSignedIn() async throws -> (system: ClinicSystem, client: Client) {
        let (system, client, _) = try await awaitedSession()
        return (system, client)
    }

    /// `awaitedSignedIn` with the session's token.
    func awaitedSession() async throws -> (system: ClinicSystem, client: Client, token: String) {
        let system = try await awaitedSystem()
        let (client, token) = try await awaitedPatient(system)
        return (system, client, token)
    }

    /// The signed-in patient of `system`, found awaited, with the session's token.
    func awaitedPatient(_ system: ClinicSystem) async throws -> (client: Client, token: String) {
        guard let token = try sessionFile.read() else { throw ClinicError(.notLoggedIn, .notLoggedIn) }
        let client = try await system.clients.signedInPatient(token: token)
        SavedLanguage.shared.value = client.language
        SessionUse.shared.record(system, token)
        return (client, token)
    }

    /// The logged-in patient and their token.
    func currentClient(_ system: ClinicSystem) throws -> (client: Client, token: String) {
        let token = try sessionFile.read()
        let client = try system.clients.currentUser(token: token)
        SavedLanguage.shared.value = client.language
        if let token { SessionUse.shared.record(system, token) }
        return (client, token ?? "")
    }

    /// Runs loading work with a progress bar on stderr (drawn only on a terminal, after a second).
    @discardableResult
    func withProgress<T>(_ work: (@escaping (Int, Int) -> Void) throws -> T) rethrows -> T {
        let bar = ProgressBar(Strings.text(.progressClinics, language), terminal: terminal)
        defer { bar.finish() }
        return try work(bar.update)
    }

    func text(_ key: MessageKey, _ arguments: String...) -> String {
        Strings.text(key, language, arguments)
    }

    func text(_ key: TerminalKey, _ arguments: String...) -> String {
        TerminalWords.text(key, language, arguments)
    }

    /// A password: the next line of standard input with `--password-stdin`, else asked for
    /// without echo on a terminal (with `confirm`, twice: `passwordsDiffer` if they differ);
    /// off a terminal without the flag, `invalid_input`.
    func password(fromStdin: Bool, prompt: TerminalKey = .promptPassword, confirm: Bool = false) throws -> String {
        if fromStdin {
            guard let line = terminal.readSecretFromStdin(), !line.isEmpty else { throw TerminalError.invalid(.passwordEmpty) }
            return line
        }
        guard terminal.stdinIsTerminal else { throw TerminalError.invalid(.passwordNeeded) }
        // A new password (asked twice): its rules before it is typed, not after a refusal.
        if confirm { FileHandle.standardOutput.write(Data((Validator.passwordRules(language) + "\n").utf8)) }
        let password = terminal.askSecret(text(prompt)) ?? ""
        if confirm, password != (terminal.askSecret(text(.promptPasswordAgain)) ?? "") { throw ClinicError.invalid(.passwordsDiffer) }
        return password
    }

    /// Prints a patient: the JSON shape, or the one-line summary.
    func emitClient(_ client: Client, unreadMessages: Int? = nil) throws {
        try emit(ClientJSON(client, unreadMessages: unreadMessages)) {
            var lines = [text(.whoami, client.login, client.name, client.surname, client.street, client.house, client.city)]
            if let email = client.email { lines.append(text(.emailLine, email)) }
            if let pending = client.pendingEmail { lines.append(text(.emailPendingLine, pending)) }
            if let unreadMessages, unreadMessages > 0 { lines.append(text(.messagesUnread, String(unreadMessages))) }
            return lines.joined(separator: "\n")
        }
    }

    /// The signed-in patient with the unread count, as `whoami` and `profile show` print them.
    func emitSignedInClient() async throws {
        let (system, client) = try await awaitedSignedIn()
        try emitClient(client, unreadMessages: try await system.clients.unreadCount(clientId: client.id ?? 0))
    }

    /// Prints either the JSON value or the human text, on stdout. The text is made only when
    /// it is printed, so what only it needs (names, tables) is not looked up for `--json`.
    func emit<T: Encodable>(_ value: T, human: () throws -> String) throws {
        if json {
            try Output.printJSON(value)
        } else {
            let text = try human()
            if !text.isEmpty { print(text) }
        }
    }

    /// `emit` for an awaited command: the human text may await the store.
    func emit<T: Encodable>(_ value: T, human: () async throws -> String) async throws {
        if json {
            try Output.printJSON(value)
        } else {
            let text = try await human()
            if !text.isEmpty { print(text) }
        }
    }
}

/// The session a command used, so that its last use is recorded only once the command has
/// succeeded: a failed command leaves the database exactly as it was.
final class SessionUse: @unchecked Sendable {
    static let shared = SessionUse()
    private let lock = NSLock()
    private var pending: (ClinicSystem, String)?

    func record(_ system: ClinicSystem, _ token: String) {
        lock.withLock { pending = (system, token) }
    }

    func finish() {
        guard let (system, token) = taken() else { return }
        // Best effort: failing to extend a session must not turn a success into an error.
        try? system.clients.touchSession(token: token)
    }

    /// `finish` awaited (an awaited command's, `AsyncEdge`).
    func finish() async {
        guard let (system, token) = taken() else { return }
        try? await system.clients.touchSession(token: token)
    }

    private func taken() -> (ClinicSystem, String)? {
        lock.withLock {
            defer { pending = nil }
            return pending
        }
    }
}

/// Stands in for the HTTP geocoder when its settings are wrong: asking it says so.
struct MisconfiguredGeocoder: Geocoder {
    let error: ClinicError
    var source: String { "nominatim" }
    func geocode(_ query: String) throws -> (coordinate: Coordinate, precision: String, name: String?)? { throw error }
    func lookUp(_ query: String) async throws -> (coordinate: Coordinate, precision: String, name: String?)? { throw error }
}

/// The logged-in patient's saved language, once known: it outranks the environment (but not
/// `--lang`) for the rest of the command, errors included.
final class SavedLanguage: @unchecked Sendable {
    static let shared = SavedLanguage()
    private let lock = NSLock()
    private var stored: Language?
    var value: Language? {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }
}
