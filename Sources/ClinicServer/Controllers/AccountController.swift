import ClinicKit
import Foundation
import HTTPTypes
import Hummingbird

/// The patient's account: registration, sessions (log-in, devices, log-out), the profile,
/// the password, the access log, the export, deleting the account, and the privacy policy.
struct AccountController {
    struct RegistrationBody: Decodable, Sendable {
        let login: String, password: String, name: String, surname: String, street: String, house: String, city: String
        let clinicId: Int64?
        let language: Language?
        let acceptPrivacy: Bool
        let birthDate: String?
        let phone: String?
    }
    struct LogInBody: Decodable, Sendable {
        struct DeviceBody: Decodable, Sendable { let name: String; let platform: String; let appVersion: String }
        let login: String, password: String
        let device: DeviceBody?
        let acceptPrivacy: Bool?
    }
    struct ProfileBody: Decodable, Sendable {
        let name: String?, surname: String?, street: String?, house: String?, city: String?
        let clinicId: Int64?
        let language: Language?
        /// What comes by text (issue 45).
        let textReminders: Bool?, textOffers: Bool?
    }
    struct PasswordBody: Decodable, Sendable { let oldPassword: String; let newPassword: String }
    struct ClaimBody: Decodable, Sendable { let code: String; let login: String; let password: String }
    struct DeleteBody: Decodable, Sendable { let password: String }

    struct PatientEnvelope: Encodable { let patient: ClientJSON }
    struct SessionCreated: Encodable { let token: String; let expiresAt: String; let patient: ClientJSON }
    struct SessionJSON: Encodable {
        struct DeviceJSON: Encodable { let name: String; let platform: String; let appVersion: String }
        let id: Int64; let device: DeviceJSON?; let createdAt: String; let lastUsedAt: String; let current: Bool

        init(_ info: SessionInfo) {
            id = info.id; createdAt = DateText.iso8601(info.createdAt); lastUsedAt = DateText.iso8601(info.lastUsedAt)
            current = info.isCurrent
            device = info.device.map { DeviceJSON(name: $0.name, platform: $0.platform, appVersion: $0.appVersion) }
        }
    }

    let dependencies: ServerDependencies
    var system: ClinicSystem { dependencies.system }

    func addRoutes(to group: RouterGroup<APIContext>) {
        group.post("patients", use: register)
        group.post("patients/claim", use: claim)
        group.post("sessions", use: logIn)
        group.get("privacy-policy") { _, context in try HTTPMapping.json(PolicyJSON(context.language)) }
        let patient = group.group().add(middleware: PatientAuthenticator(dependencies: dependencies))
        // The routes that end the session itself record no use of it.
        let ending = group.group().add(middleware: PatientAuthenticator(dependencies: dependencies, touches: false))
        patient.get("sessions", use: sessions)
        ending.delete("sessions/:id", use: endSession)
        patient.get("me", use: me)
        patient.patch("me", use: updateProfile)
        patient.post("me/password", use: changePassword)
        patient.get("me/access-log", use: accessLog)
        patient.get("me/export", use: export)
        ending.delete("me", use: deleteAccount)
    }

    @Sendable func register(_ request: Request, context: APIContext) async throws -> Response {
        let asked = context.language
        try dependencies.checkAuthRate(context, asked)
        let body = try await RequestBody.decode(RegistrationBody.self, from: request, context: context)
        let registration = RegistrationRequest(
            login: body.login, password: body.password, name: body.name, surname: body.surname, street: body.street,
            house: body.house, city: body.city, clinicId: body.clinicId, language: body.language ?? asked,
            acceptedPrivacy: body.acceptPrivacy, birthDate: body.birthDate, phone: body.phone)
        // Awaited (issue 56: `RegistrationStore`); only the Argon2 runs behind the gate, on the pool.
        let client = try await dependencies.awaited(asked) { [system, dependencies] in
            try await system.clients.registerUser(registration, passwords: dependencies.passwordRunner)
        }
        return try HTTPMapping.json(PatientEnvelope(patient: ClientJSON(client)), status: .created)
    }

    /// `POST /v1/patients/claim {code, login, password}`: a walk-in sets up the account the
    /// front desk registered; limited per address like registration.
    @Sendable func claim(_ request: Request, context: APIContext) async throws -> Response {
        let asked = context.language
        try dependencies.checkAuthRate(context, asked)
        let body = try await RequestBody.decode(ClaimBody.self, from: request, context: context)
        // Awaited (issue 56: `ClaimStore`); only the Argon2 runs behind the gate, on the pool.
        let client = try await dependencies.awaited(asked) { [system, dependencies] in
            try await system.clients.claim(code: body.code, login: body.login, password: body.password, passwords: dependencies.passwordRunner)
        }
        return try HTTPMapping.json(PatientEnvelope(patient: ClientJSON(client)))
    }

    @Sendable func logIn(_ request: Request, context: APIContext) async throws -> Response {
        let asked = context.language
        do { try dependencies.checkAuthRate(context, asked) } catch let failure as APIFailure {
            dependencies.metrics.logInRefused(failure.code)
            throw failure
        }
        let body = try await RequestBody.decode(LogInBody.self, from: request, context: context)
        let device = body.device.map { Device(name: $0.name, platform: $0.platform, appVersion: $0.appVersion) }
        let client: Client, token: String
        do {
            // Awaited (issue 56: `LogInStore`); only the Argon2 runs behind the gate, on the pool.
            (client, token) = try await dependencies.awaited(asked) { [system, dependencies] in
                try await system.clients.logIn(login: body.login, password: body.password, acceptPrivacy: body.acceptPrivacy ?? false,
                                               device: device, passwords: dependencies.passwordRunner)
            }
        } catch let failure as APIFailure {
            dependencies.metrics.logInRefused(failure.code)
            throw failure
        }
        let expires = Date().addingTimeInterval(SessionManager.idleLimit)
        return try HTTPMapping.json(SessionCreated(token: token, expiresAt: DateText.iso8601(expires), patient: ClientJSON(client)),
                                    status: .created)
    }

    @Sendable func sessions(_ request: Request, context: APIContext) async throws -> Response {
        let patient = try context.signedInPatient()
        let sessions = try await dependencies.awaited(patient.language) { [system] in
            try await system.clients.signedInSessions(clientId: patient.id, current: patient.token)
        }
        return try HTTPMapping.json(sessions.map(SessionJSON.init))
    }

    /// `current` (log out), `others` ("sign out everywhere else", which renews the calendar
    /// address too), or a session's id. Only the first leaves the session unused.
    @Sendable func endSession(_ request: Request, context: APIContext) async throws -> Response {
        let patient = try context.signedInPatient()
        switch context.parameters.get("id") {
        case "current":
            _ = try await dependencies.awaited(patient.language) { [system] in try await system.clients.logOut(token: patient.token) }
        case "others":
            _ = try await dependencies.awaited(patient.language) { [system] in
                try await system.clients.endOtherSessions(clientId: patient.id, keeping: patient.token)
            }
            await dependencies.touch(patient)
        default:
            let id = try context.parameters.id("id")
            try await dependencies.awaited(patient.language) { [system] in try await system.clients.endSession(id, clientId: patient.id) }
            await dependencies.touch(patient)
        }
        return Response(status: .noContent)
    }

    @Sendable func me(_ request: Request, context: APIContext) async throws -> Response {
        let patient = try context.signedInPatient()
        let (unread, phone) = try await dependencies.awaited(patient.language) { [system] in
            try await system.clients.account(clientId: patient.id)
        }
        return try HTTPMapping.json(ClientJSON(patient.client, unreadMessages: unread, phone: phone))
    }

    @Sendable func updateProfile(_ request: Request, context: APIContext) async throws -> Response {
        let patient = try context.signedInPatient()
        let body = try await RequestBody.decode(ProfileBody.self, from: request, context: context)
        let changes = ProfileChanges(name: body.name, surname: body.surname, street: body.street, house: body.house,
                                     city: body.city, clinicId: body.clinicId, language: body.language)
        let (client, phone) = try await dependencies.awaited(patient.language) { [system] in
            (try await system.clients.updateProfile(clientId: patient.id, changes,
                                                    texts: (reminders: body.textReminders, offers: body.textOffers)),
             try await system.clients.phone(clientId: patient.id))
        }
        return try HTTPMapping.json(ClientJSON(client, phone: phone))
    }

    @Sendable func changePassword(_ request: Request, context: APIContext) async throws -> Response {
        let patient = try context.signedInPatient()
        try dependencies.checkAuthRate(context, patient.language) // a password guess, as a log-in is
        let body = try await RequestBody.decode(PasswordBody.self, from: request, context: context)
        // Awaited (issue 56: `AccountSecurityStore`); only the Argon2 runs behind the gate, on the pool.
        try await dependencies.awaited(patient.language) { [system, dependencies] in
            try await system.clients.changePassword(clientId: patient.id, old: body.oldPassword, new: body.newPassword,
                                                    keeping: patient.token, passwords: dependencies.passwordRunner)
        }
        return try HTTPMapping.json(ChangedJSON(changed: true))
    }

    @Sendable func accessLog(_ request: Request, context: APIContext) async throws -> Response {
        let patient = try context.signedInPatient()
        let entries = try await dependencies.awaited(patient.language) { [system] in try await system.clients.accessLog(clientId: patient.id) }
        return try HTTPMapping.json(entries.map(AccessLogEntryJSON.init))
    }

    @Sendable func export(_ request: Request, context: APIContext) async throws -> Response {
        let patient = try context.signedInPatient()
        let data = try await dependencies.awaited(patient.language) { [system] in try await system.clients.export(clientId: patient.id) }
        return try HTTPMapping.json(ExportJSON(data))
    }

    @Sendable func deleteAccount(_ request: Request, context: APIContext) async throws -> Response {
        let patient = try context.signedInPatient()
        try dependencies.checkAuthRate(context, patient.language) // a password guess, as a log-in is
        let body = try await RequestBody.decode(DeleteBody.self, from: request, context: context)
        try await dependencies.awaited(patient.language) { [system, dependencies] in
            try await system.clients.deleteAccount(clientId: patient.id, password: body.password, passwords: dependencies.passwordRunner)
        }
        return try HTTPMapping.json(DeletedJSON(deleted: patient.client.login))
    }
}
