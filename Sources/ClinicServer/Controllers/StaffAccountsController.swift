import ClinicKit
import Foundation
import HTTPTypes
import Hummingbird

/// The staff's sessions and accounts under `/v1/staff`: log-in and log-out, who am I, and the
/// clinic's staff accounts (an administrator's). The same `StaffController` calls as
/// `clinic staff …`.
struct StaffAccountsController {
    struct LogInBody: Decodable, Sendable { let login: String; let password: String }
    struct AccountBody: Decodable, Sendable {
        let login: String, name: String, surname: String, role: StaffRole, password: String
        let doctorId: Int64?
    }
    struct SessionCreated: Encodable { let token: String; let expiresAt: String; let staff: StaffJSON }

    let dependencies: ServerDependencies
    var system: ClinicSystem { dependencies.system }

    func addRoutes(to group: RouterGroup<APIContext>) {
        group.post("sessions", use: logIn)
        group.group().add(middleware: StaffAuthenticator(dependencies: dependencies, touches: false))
            .delete("sessions/current", use: logOut)
        let staff = group.group().add(middleware: StaffAuthenticator(dependencies: dependencies))
        staff.get("me") { _, context in try HTTPMapping.json(StaffJSON(try context.signedInStaff().member)) }
        staff.get("accounts", use: accounts)
        staff.post("accounts", use: addAccount)
        staff.post("accounts/:id/disable", use: disable)
    }

    @Sendable func logIn(_ request: Request, context: APIContext) async throws -> Response {
        let asked = context.language
        try dependencies.checkAuthRate(context, asked)
        let body = try await RequestBody.decode(LogInBody.self, from: request, context: context)
        // Awaited (issue 56: `LogInStore`); only the Argon2 runs behind the gate, on the pool.
        let (member, token) = try await dependencies.awaited(asked) { [system, dependencies] in
            try await system.staff.logIn(login: body.login, password: body.password, passwords: dependencies.passwordRunner)
        }
        let expires = Date().addingTimeInterval(StaffController.idleLimit)
        return try HTTPMapping.json(SessionCreated(token: token, expiresAt: DateText.iso8601(expires), staff: StaffJSON(member)),
                                    status: .created)
    }

    @Sendable func logOut(_ request: Request, context: APIContext) async throws -> Response {
        let staff = try context.signedInStaff()
        _ = try await dependencies.awaited(context.language) { [system] in try await system.staff.logOut(token: staff.token) }
        return Response(status: .noContent)
    }

    @Sendable func accounts(_ request: Request, context: APIContext) async throws -> Response {
        let member = try context.signedInStaff().member
        let accounts = try await dependencies.awaited(context.language) { [system] in
            try await system.staff.accounts(clinicId: member.clinicId, by: member)
        }
        return try HTTPMapping.json(accounts.map(StaffJSON.init))
    }

    @Sendable func addAccount(_ request: Request, context: APIContext) async throws -> Response {
        let member = try context.signedInStaff().member
        let body = try await RequestBody.decode(AccountBody.self, from: request, context: context)
        let requestId = context.requestId
        // Awaited (issue 56: `StaffAccountsStore.addStaff`); only the Argon2 runs behind the gate, on the pool.
        let added = try await dependencies.awaited(context.language) { [system, dependencies] in
            try await system.staff.addStaff(StaffInput(login: body.login, name: body.name, surname: body.surname, role: body.role,
                                                       clinicId: member.clinicId, doctorId: body.doctorId, password: body.password),
                                            by: member, requestId: requestId, passwords: dependencies.passwordRunner)
        }
        return try HTTPMapping.json(StaffJSON(added), status: .created)
    }

    @Sendable func disable(_ request: Request, context: APIContext) async throws -> Response {
        let member = try context.signedInStaff().member
        let id = try context.parameters.id("id")
        let requestId = context.requestId
        let disabled = try await dependencies.awaited(context.language) { [system] in
            try await system.staff.disable(id, by: member, requestId: requestId)
        }
        return try HTTPMapping.json(StaffJSON(disabled))
    }
}

extension StaffRole: Decodable {}
