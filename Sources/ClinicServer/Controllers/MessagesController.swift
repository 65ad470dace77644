import ClinicKit
import Foundation
import HTTPTypes
import Hummingbird

/// The patient's inbox, e-mail address and calendar: the same ClinicKit calls as
/// `clinic messages`, `clinic profile email` and `clinic profile calendar-url`. The calendar
/// feed itself is public: calendar apps send its own token in the query, no session.
struct MessagesController {
    struct EmailBody: Decodable, Sendable { let address: String }
    struct EmailCodeBody: Decodable, Sendable { let code: String }

    let dependencies: ServerDependencies
    var system: ClinicSystem { dependencies.system }

    func addRoutes(to group: RouterGroup<APIContext>) {
        let patient = group.group().add(middleware: PatientAuthenticator(dependencies: dependencies))
        patient.get("messages", use: messages)
        patient.post("messages/:id/read", use: markRead)
        patient.get("me/email") { _, context in
            let patient = try context.signedInPatient()
            return try HTTPMapping.json(EmailJSON(EmailStatus(confirmed: patient.client.email, pending: patient.client.pendingEmail)))
        }
        patient.put("me/email", use: setEmail)
        patient.post("me/email/confirm", use: confirmEmail)
        patient.delete("me/email", use: removeEmail)
        patient.get("me/calendar-token", use: calendarToken)
        patient.post("me/calendar-token", use: newCalendarToken)
        patient.delete("me/calendar-token", use: revokeCalendarToken)
        group.get("me/calendar.ics", use: calendarFeed)
    }

    @Sendable func messages(_ request: Request, context: APIContext) async throws -> Response {
        let patient = try context.signedInPatient()
        let unread = try request.queryBool("unread")
        let messages = try await dependencies.awaited(patient.language) { [system] in
            try await system.clients.messages(clientId: patient.id, unreadOnly: unread)
        }
        return try HTTPMapping.json(messages.map(MessageJSON.init))
    }

    @Sendable func markRead(_ request: Request, context: APIContext) async throws -> Response {
        let patient = try context.signedInPatient()
        let id = try context.parameters.id("id")
        let message = try await dependencies.awaited(patient.language) { [system] in
            try await system.clients.markRead(clientId: patient.id, messageId: id)
        }
        return try HTTPMapping.json(MessageJSON(message))
    }

    @Sendable func setEmail(_ request: Request, context: APIContext) async throws -> Response {
        let patient = try context.signedInPatient()
        let body = try await RequestBody.decode(EmailBody.self, from: request, context: context)
        let from = context.clientAddress
        let status = try await dependencies.codeSent(patient.language) { [system] in
            try await system.clients.setEmail(clientId: patient.id, address: body.address, from: from)
        }
        return try HTTPMapping.json(EmailJSON(status), status: .accepted)
    }

    @Sendable func confirmEmail(_ request: Request, context: APIContext) async throws -> Response {
        let patient = try context.signedInPatient()
        try dependencies.checkAuthRate(context, patient.language) // a guess at a code, as a log-in is
        let body = try await RequestBody.decode(EmailCodeBody.self, from: request, context: context)
        let status = try await dependencies.awaited(patient.language) { [system] in
            try await system.clients.confirmEmail(clientId: patient.id, code: body.code)
        }
        return try HTTPMapping.json(EmailJSON(status))
    }

    @Sendable func removeEmail(_ request: Request, context: APIContext) async throws -> Response {
        let patient = try context.signedInPatient()
        try await dependencies.awaited(patient.language) { [system] in try await system.clients.removeEmail(clientId: patient.id) }
        return Response(status: .noContent)
    }

    @Sendable func calendarToken(_ request: Request, context: APIContext) async throws -> Response {
        let patient = try context.signedInPatient()
        let token = try await dependencies.awaited(patient.language) { [system] in
            try await system.clients.existingCalendarToken(clientId: patient.id)
        }
        guard let token else { throw ClinicError(.notFound, .calendarTokenInvalid) }
        return try HTTPMapping.json(CalendarTokenJSON(token: token, base: dependencies.publicBase(request)))
    }

    @Sendable func newCalendarToken(_ request: Request, context: APIContext) async throws -> Response {
        let patient = try context.signedInPatient()
        let token = try await dependencies.awaited(patient.language) { [system] in
            try await system.clients.calendarToken(clientId: patient.id, rotate: true)
        }
        return try HTTPMapping.json(CalendarTokenJSON(token: token, base: dependencies.publicBase(request)), status: .created)
    }

    @Sendable func revokeCalendarToken(_ request: Request, context: APIContext) async throws -> Response {
        let patient = try context.signedInPatient()
        try await dependencies.awaited(patient.language) { [system] in try await system.clients.revokeCalendarToken(clientId: patient.id) }
        return Response(status: .noContent)
    }

    /// The calendar app's request: the feed's own token in the query, no session.
    @Sendable func calendarFeed(_ request: Request, context: APIContext) async throws -> Response {
        let token = request.query("token") ?? ""
        let text = try await dependencies.awaited(context.language) { [system] in try await system.calendarFeed(token: token) }
        return ServerDependencies.calendar(text, filename: "appointments.ics")
    }
}
