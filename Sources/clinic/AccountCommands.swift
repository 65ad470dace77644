import ArgumentParser
import ClinicKit
import Foundation

struct Register: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Create a patient account.",
        discussion: "On a terminal, missing fields, the privacy consent and the password (twice, without echo) are asked for.")

    @OptionGroup var global: GlobalOptions
    @Option(help: "Login: 3 to 64 letters, digits or . _ - @.") var login: String?
    @Option(help: "First name.") var name: String?
    @Option(help: "Surname.") var surname: String?
    @Option(help: "Street.") var street: String?
    @Option(help: "House number.") var house: String?
    @Option(help: "City, optionally with its state or country (\"Hanford\", \"Portland, ME\", \"Минск\").") var city: String?
    @Option(help: "Date of birth, YYYY-MM-DD (optional; the clinic's desk and records use it).") var birthDate: String?
    @Option(help: "A phone the clinic may call, 7 to 15 digits (optional; texts need the mobile number confirmed with `profile phone`).")
    var phone: String?
    @Option(help: "Home clinic id (default: the clinic nearest to your city; on a terminal you choose among the five nearest).")
    var clinic: Int64?
    @Flag(help: "Accept the privacy policy (see: clinic privacy).") var acceptPrivacy = false
    @Flag(help: "Read the password from the first line of standard input.") var passwordStdin = false

    func run() async throws {
        let context = Context(global)
        let interactive = context.terminal.stdinIsTerminal && !passwordStdin
        func value(_ given: String?, _ field: String, _ flag: String) throws -> String {
            if let given { return given }
            guard interactive else { throw TerminalError.invalid(.missingOption, flag) }
            guard let answer = context.terminal.ask(context.text(.promptField, field)) else {
                throw TerminalError.invalid(.missingOption, flag)
            }
            return answer
        }
        let login = try value(self.login, "login", "--login")
        let name = try value(self.name, "name", "--name")
        let surname = try value(self.surname, "surname", "--surname")
        let street = try value(self.street, "street", "--street")
        let house = try value(self.house, "house", "--house")
        let typedCity = try value(self.city, "city", "--city")

        var accepted = acceptPrivacy
        if !accepted && interactive { accepted = context.terminal.askConsent(context.language) }
        guard accepted else { throw ClinicError(.privacyNotAccepted, .privacyRequired) }

        let password = try context.password(fromStdin: passwordStdin, confirm: true)

        let system = try await context.awaitedSystem()
        // A name several places share: asked on a terminal, else the first, said on stderr.
        let city = try await chooseCity(context, system, typedCity, ask: interactive)
        var homeClinic = clinic
        if homeClinic == nil, interactive {
            homeClinic = try await chooseHomeClinic(context, system, city)
        }
        let client = try await system.clients.registerUser(RegistrationRequest(
            login: login, password: password, name: name, surname: surname,
            street: street, house: house, city: city, clinicId: homeClinic, language: context.language,
            acceptedPrivacy: accepted, birthDate: birthDate, phone: phone), passwords: InlinePasswordRunner())
        try context.emit(ClientJSON(client)) {
            context.text(.registered, client.login, String(client.id ?? 0))
        }
    }
}

/// The city to register with: when it names several places, "Which Vincennes?" with them
/// numbered (`ask`), and the answer's unambiguous form ("Vincennes, FR"); without asking, the
/// city as typed (its first place), with a note on stderr naming the others. A city no source
/// knows is left for registration to refuse.
func chooseCity(_ context: Context, _ system: ClinicSystem, _ city: String, ask: Bool) async throws -> String {
    guard let place = try? await system.geocoding.resolve(city), place.isAmbiguous else { return city }
    guard ask else {
        context.noteAmbiguity(place)
        return city
    }
    let choices = place.choices
    print(context.text(.whichPlace, placeWord(city)))
    print(placeTable(choices, context))
    while true {
        guard let answer = context.terminal.ask(context.text(.choosePlace, String(choices.count))) else { return choices[0].typed }
        let trimmed = answer.trimmingCharacters(in: .whitespaces)
        if trimmed.isEmpty { return choices[0].typed }
        if let choice = Int(trimmed), (1...choices.count).contains(choice) { return choices[choice - 1].typed }
    }
}

/// "Vincennes" of "Vincennes, …", for "Which Vincennes?".
func placeWord(_ city: String) -> String {
    city.split(separator: ",").first.map { $0.trimmingCharacters(in: .whitespaces) } ?? city
}

/// The places a name may mean, numbered.
func placeTable(_ choices: [(name: String, typed: String)], _ context: Context) -> String {
    Output.table(["#", context.text(.headerName)], choices.enumerated().map { [String($0.offset + 1), $0.element.name] })
}

/// Shows the five clinics nearest to the city and asks which is the patient's; nil (the
/// nearest) when the city cannot be found: registration then says why.
func chooseHomeClinic(_ context: Context, _ system: ClinicSystem, _ city: String) async throws -> Int64? {
    guard let place = try? await system.geocoding.resolve(city) else { return nil }
    let nearby = try await system.clinics.nearest(to: place.coordinate, NearestQuery(limit: 5))
    guard nearby.count > 1 else { return nearby.first?.clinic.id }
    print(numberedClinicTable(nearby, context))
    while true {
        guard let answer = context.terminal.ask(context.text(.chooseClinic, String(nearby.count))) else {
            return nearby.first?.clinic.id
        }
        let trimmed = answer.trimmingCharacters(in: .whitespaces)
        if trimmed.isEmpty { return nearby.first?.clinic.id }
        if let choice = Int(trimmed), (1...nearby.count).contains(choice) { return nearby[choice - 1].clinic.id }
    }
}

struct Login: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Log in; the session is kept in the session file.")

    @OptionGroup var global: GlobalOptions
    @Option(help: "Your login.") var login: String?
    @Flag(help: "Read the password from the first line of standard input.") var passwordStdin = false
    @Flag(help: "Accept the current privacy policy, when it changed since you last accepted it.") var acceptPrivacy = false

    func run() async throws {
        let context = Context(global)
        let interactive = context.terminal.stdinIsTerminal && !passwordStdin
        var login = self.login
        if login == nil, interactive { login = context.terminal.ask(context.text(.promptField, "login")) }
        guard let login else { throw TerminalError.invalid(.missingOption, "--login") }
        let password = try context.password(fromStdin: passwordStdin)
        let system = try await context.awaitedSystem()
        // On a terminal, a changed policy is shown and asked about, as at registration.
        let client = try await signIn(context, system, login: login, password: password, acceptPrivacy: acceptPrivacy) {
            interactive && context.terminal.askConsent(context.language)
        }.client
        struct Result: Encodable { let clientId: Int64; let login: String }
        try context.emit(Result(clientId: client.id ?? 0, login: client.login)) {
            context.text(.loggedIn, client.login)
        }
    }
}

/// Logs in and keeps the session in the session file. When the privacy policy changed since
/// the patient accepted it, `consent` is asked (it shows the policy) and the log-in is tried
/// again with the answer.
func signIn(_ context: Context, _ system: ClinicSystem, login: String, password: String, acceptPrivacy: Bool,
            consent: () -> Bool) async throws -> (client: Client, token: String) {
    let (client, token): (Client, String)
    do {
        (client, token) = try await system.clients.logIn(login: login, password: password, acceptPrivacy: acceptPrivacy,
                                                         passwords: InlinePasswordRunner())
    } catch let error as ClinicError where error.key == .privacyChanged {
        guard consent() else { throw error }
        (client, token) = try await system.clients.logIn(login: login, password: password, acceptPrivacy: true,
                                                         passwords: InlinePasswordRunner())
    }
    do {
        try context.sessionFile.write(token)
    } catch {
        // No file, no session: do not leave a usable token behind in the database.
        _ = try? await system.clients.logOut(token: token)
        throw error
    }
    return (client, token)
}

struct Logout: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "End the session: deletes it from the database and the session file.")

    @OptionGroup var global: GlobalOptions

    func run() async throws {
        let context = Context(global)
        let file = context.sessionFile
        var ended = false
        // A token others could read is ended all the same (then the file goes), with a warning.
        let (token, exposed) = try file.readAllowingExposure()
        if let token {
            let system = try await context.awaitedSystem()
            ended = try await system.clients.logOut(token: token)
            file.delete()
            if exposed { context.terminal.note(context.text(.sessionFileInsecureEnded, file.path)) }
        }
        struct Result: Encodable { let loggedOut: Bool }
        try context.emit(Result(loggedOut: ended)) {
            context.text(ended ? .loggedOut : .notLoggedInInfo)
        }
    }
}

struct Whoami: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show the logged-in patient.")

    @OptionGroup var global: GlobalOptions

    func run() async throws {
        try await Context(global).emitSignedInClient()
    }
}

struct Privacy: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show the privacy policy.")

    @OptionGroup var global: GlobalOptions

    func run() throws {
        let context = Context(global)
        let policy = PolicyJSON(context.language)
        try context.emit(policy) { policy.text }
    }
}

struct Claim: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Set up the online account the front desk registered for you, with the code they gave you.",
        discussion: "Choose a login and a password (asked twice on a terminal). By claiming the account you accept the privacy policy (see: clinic privacy).")

    @OptionGroup var global: GlobalOptions
    @Option(help: "The code from the front desk (XXXX-XXXX-XXXX).") var code: String
    @Option(help: "Login: 3 to 64 letters, digits or . _ - @.") var login: String
    @Flag(help: "Read the password from the first line of standard input.") var passwordStdin = false

    func run() async throws {
        let context = Context(global)
        let password = try context.password(fromStdin: passwordStdin, confirm: true)
        let client = try await context.awaitedSystem().clients.claim(code: code, login: login, password: password,
                                                                     passwords: InlinePasswordRunner())
        try context.emit(ClientJSON(client)) { context.text(.claimed, client.login) }
    }
}
