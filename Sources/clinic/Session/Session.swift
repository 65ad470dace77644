import ArgumentParser
import ClinicKit
import Foundation

struct Shell: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "The interactive session: log in or register, then find clinics and book, reschedule or cancel from menus.",
        discussion: "`clinic` with no command on a terminal does the same. Numbers choose, Enter takes the default, q (or Ctrl-D) goes back.")

    @OptionGroup var global: GlobalOptions

    func run() throws {
        let context = Context(global)
        guard !context.json else { throw TerminalError.invalid(.sessionNoJSON) }
        try Session(context).run()
    }
}

/// The phone app's journey at a terminal: Start → log in or register → main menu → clinics,
/// booking, appointments, profile. Every change is one controller call (one transaction), so
/// leaving at any question — q, Ctrl-D, Ctrl-C — never leaves half a change behind. The
/// session is the same as `clinic login`'s: a patient logged in here is logged in for the
/// scriptable commands too.
final class Session {
    private(set) var context: Context
    let system: ClinicSystem
    let prompt: Prompt
    var client: Client?
    var token: String?
    /// `--lang`, or the language chosen at the start screen: it outranks the patient's saved
    /// language for the rest of the session.
    var requestedLanguage: Language?

    init(_ context: Context) throws {
        self.context = context
        requestedLanguage = context.options.lang
        system = try AsyncEdge.waitHere { [context] in try await context.awaitedSystem() }
        let reader = LineReader()
        prompt = Prompt(reader: reader, language: context.language, style: .stdout,
                        editor: LineEditor(reader: reader, environment: context.environment))
    }

    var language: Language { context.language }

    /// A use case awaited from the session's screens, which run on the main thread: it waits
    /// (`AsyncEdge.waitHere`), and the prompt is used by one thread at a time.
    func awaited<T: Sendable>(_ work: @escaping () async throws -> T) throws -> T { try AsyncEdge.waitHere(work) }

    func text(_ key: MessageKey, _ arguments: String...) -> String { Strings.text(key, language, arguments) }
    func text(_ key: TerminalKey, _ arguments: String...) -> String { TerminalWords.text(key, language, arguments) }

    /// Speaks `language` from now on.
    func use(_ language: Language) {
        var options = context.options
        options.lang = language
        context = Context(options, environment: context.environment)
        prompt.language = language
    }

    func run() throws {
        LineReader.catchInterrupts()
        useHistory(of: nil)
        if let token = try? context.sessionFile.read(),
           let client = try? awaited({ [system] in try await system.clients.signedInPatient(token: token) }) {
            signedIn(client, token)
        }
        prompt.say(prompt.style.bold(text(.sessionTitle)))
        prompt.say(prompt.style.dim(text(.sessionHint)))
        while client == nil ? startScreen() : mainMenu() {}
        prompt.say(text(.sessionBye))
    }

    /// The line history of `login` (nil: the guest's) from now on; a history folder that is a
    /// link or open to others keeps none, and the session says so once.
    func useHistory(of login: String?) {
        if let folder = prompt.editor?.useHistory(of: login) { prompt.problem(text(.historyFolderUnsafe, folder)) }
    }

    func signedIn(_ client: Client, _ token: String) {
        self.client = client
        self.token = token
        useHistory(of: client.login)
        use(requestedLanguage ?? client.language)
    }

    /// Runs one action; its error is shown and the session goes on. The session is checked
    /// first: one ended elsewhere (log-out, password change) allows nothing more.
    func attempt(_ action: () throws -> Void) {
        do {
            if let token { client = try awaited { [system] in try await system.clients.signedInPatient(token: token) } }
            try action()
            if let token { try? awaited { [system] in try await system.clients.touchSession(token: token) } }
        } catch let error as ClinicError where error.code == .notLoggedIn {
            prompt.problem(text(.sessionEnded))
            client = nil
            token = nil
            useHistory(of: nil)
        } catch let error as ClinicError {
            prompt.problem(error.message(in: language))
        } catch {
            prompt.problem(text(.internalError, String(describing: error)))
        }
    }

    // MARK: Start

    /// Log in, register, the other language; false to leave.
    func startScreen() -> Bool {
        let other: Language = language == .en ? .ru : .en
        guard let choice = prompt.choose(text(.startTitle), [text(.menuLogIn), text(.menuRegister), text(.menuLanguage)],
                                         back: .menuQuit) else { return false }
        switch choice {
        case 0: attempt(logIn)
        case 1: attempt(register)
        default:
            requestedLanguage = other
            use(other)
        }
        return true
    }

    func logIn() throws {
        guard let login = prompt.line(text(.labelLogin)), let password = prompt.secret(text(.labelPassword)) else { return }
        let (client, token) = try awaited { [self] in
            try await signIn(context, system, login: login, password: password, acceptPrivacy: false) {
                prompt.say(PrivacyPolicy.text(language))
                return prompt.confirm(text(.askAcceptPrivacy), default: false)
            }
        }
        signedIn(client, token)
        prompt.success(text(.loggedIn, client.login))
    }

    /// "Which Vincennes?" with the places a city may mean numbered: the chosen place's
    /// unambiguous form ("Vincennes, FR"); nil when the patient went back.
    func whichPlace(_ city: String, _ found: GeocodeResult) -> String? {
        let choices = found.choices
        prompt.heading(text(.whichPlace, placeWord(city)))
        prompt.say(placeTable(choices, context))
        return prompt.pick(choices.count, default: 0).map { choices[$0].typed }
    }

    func register() throws {
        prompt.heading(text(.registerTitle))
        let validator = Validator()
        var values: [RegistrationField: String] = [:]
        var place: GeocodeResult?
        for field in RegistrationField.allCases {
            while values[field] == nil {
                guard let value = prompt.line(field == .city ? text(.labelCityHint) : label(field)) else { return }
                if let problem = validator.problem(field, value) {
                    prompt.problem(problem.message(in: language))
                } else if field == .login, (try? awaited({ [system] in try await system.clients.isLoginTaken(value) })) == true {
                    prompt.problem(text(.loginTaken, value))
                } else if field == .city {
                    do {
                        var found = try awaited { [system] in try await system.geocoding.resolve(value) }
                        var chosen = value
                        if found.isAmbiguous {
                            guard let typed = whichPlace(value, found) else { return }
                            chosen = typed
                            found = try awaited { [system, chosen] in try await system.geocoding.resolve(chosen) }
                        }
                        place = found
                        values[field] = chosen
                    } catch let error as ClinicError {
                        prompt.problem(error.key == .geocodeFailed ? text(.cityUnknown, value) : error.message(in: language))
                    }
                } else {
                    values[field] = value
                }
            }
        }
        guard let place else { return }
        let nearby = try awaited { [system] in try await system.clinics.nearest(to: place.coordinate, NearestQuery(limit: 5)) }
        var homeClinic = nearby.first?.clinic.id
        if nearby.count > 1 {
            prompt.heading(text(.chooseHomeClinic))
            prompt.say(numberedClinicTable(nearby, context))
            guard let index = prompt.pick(nearby.count, default: 0) else { return }
            homeClinic = nearby[index].clinic.id
        }
        prompt.say()
        prompt.say(PrivacyPolicy.text(language))
        guard prompt.confirm(text(.askAcceptPrivacy), default: false) else {
            prompt.problem(text(.privacyDeclined))
            return
        }
        let name = values[.name] ?? "", surname = values[.surname] ?? "", login = values[.login] ?? ""
        var password: String?
        // The rules before the password is typed (issue 46), not only after a refusal.
        prompt.say(prompt.style.dim(Validator.passwordRules(language)))
        while password == nil {
            guard let first = prompt.secret(text(.labelPassword)), let second = prompt.secret(text(.labelPasswordAgain)) else {
                return
            }
            if first != second {
                prompt.problem(text(.passwordsDiffer))
            } else if let problem = try system.clients.passwordProblem(first, login: login, name: name, surname: surname) {
                prompt.problem(problem.message(in: language))
            } else {
                password = first
            }
        }
        guard let password else { return }
        let request = RegistrationRequest(
            login: login, password: password, confirmPassword: password, name: name, surname: surname,
            street: values[.street] ?? "", house: values[.house] ?? "", city: values[.city] ?? "", clinicId: homeClinic,
            language: language, acceptedPrivacy: true)
        let client = try awaited { [system] in try await system.clients.registerUser(request, passwords: InlinePasswordRunner()) }
        prompt.success(text(.registeredSession, client.name))
        let (signed, token) = try awaited { [context, system] in
            try await signIn(context, system, login: login, password: password, acceptPrivacy: true) { true }
        }
        signedIn(signed, token)
    }

    func label(_ field: RegistrationField) -> String {
        switch field {
        case .login: text(.labelLogin)
        case .name: text(.labelName)
        case .surname: text(.labelSurname)
        case .street: text(.labelStreet)
        case .house: text(.labelHouse)
        case .city: text(.labelCity)
        }
    }

    // MARK: Main menu

    /// The main menu; false to leave.
    func mainMenu() -> Bool {
        // Whether the session still holds is checked by `attempt` before each action.
        guard let current = client else { return true }
        let items: [TerminalKey] = [.menuNearest, .menuClinicInfo, .menuFind, .menuBook, .menuAppointments,
                                   .menuReschedule, .menuCancel, .menuProfile, .menuMessages, .menuLogOut]
        let unread = (try? awaited { [system, clientId] in try await system.clients.unreadCount(clientId: clientId) }) ?? 0
        let labels = items.map { $0 == .menuMessages && unread > 0 ? text(.menuMessagesUnread, String(unread)) : text($0) }
        guard let choice = prompt.choose(text(.mainTitle, current.name), labels, back: .menuQuit) else {
            return false
        }
        switch items[choice] {
        case .menuNearest: attempt(nearestClinics)
        case .menuClinicInfo: attempt { if let clinic = try pickClinic() { try showClinic(clinic) } }
        case .menuFind: attempt(findSlot)
        case .menuBook: attempt { if let clinic = try pickClinic() { try book(in: clinic) } }
        case .menuAppointments: attempt(myAppointments)
        case .menuReschedule: attempt(reschedule)
        case .menuCancel: attempt(cancel)
        case .menuProfile: attempt(profile)
        case .menuMessages: attempt(messages)
        default: attempt(logOut)
        }
        return true
    }

    func logOut() throws {
        if let token { _ = try awaited { [system] in try await system.clients.logOut(token: token) } }
        context.sessionFile.delete()
        client = nil
        token = nil
        useHistory(of: nil)
        prompt.success(text(.loggedOut))
    }
}
