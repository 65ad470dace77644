import ClinicKit
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

// Messages, e-mail and calendars: the same ClinicKit calls as `clinic messages`,
// `clinic profile email`, `clinic profile calendar-url`, `clinic appointments ics` and
// `clinic staff message`.

struct EmailBody: Decodable, Sendable { let address: String }
struct EmailCodeBody: Decodable, Sendable { let code: String }
struct StaffMessageBody: Decodable, Sendable {
    let patientLogin: String?; let date: String?; let departmentId: Int64?; let text: String
}
struct RecipientsJSON: Encodable { let recipients: Int }

extension API {
    static let calendarType = "text/calendar; charset=utf-8"

    static func calendar(_ text: String, filename: String) -> Response {
        Response(status: .ok, headers: [.contentType: calendarType, .contentDisposition: "inline; filename=\"\(filename)\"",
                                        .cacheControl: "private, no-store"],
                 body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    /// The address calendar apps are given: `CLINIC_PUBLIC_URL`, else the Host the request came to.
    func publicBase(_ request: Request) -> String {
        if let base = settings.publicURL { return base }
        let scheme = settings.tls == nil ? "http" : "https"
        let host = request.head.authority ?? "\(settings.host):\(settings.port)"
        return "\(scheme)://\(host)"
    }

    func addMessageRoutes(to routes: RouteTable) {
        routes.get("/v1/messages") { request, _ in
            try await signedIn(request) { patient in
                let unread = try request.queryBool("unread")
                let messages = try await work(patient.language) { [system] in
                    try system.clients.messages(clientId: patient.id, unreadOnly: unread)
                }
                return try HTTPMapping.json(messages.map(MessageJSON.init))
            }
        }
        routes.post("/v1/messages/:id/read") { request, context in
            try await signedIn(request) { patient in
                let id = try context.parameters.id("id")
                let message = try await work(patient.language) { [system] in
                    try system.clients.markRead(clientId: patient.id, messageId: id)
                }
                return try HTTPMapping.json(MessageJSON(message))
            }
        }

        routes.get("/v1/me/email") { request, _ in
            try await signedIn(request) { patient in
                try HTTPMapping.json(EmailJSON(EmailStatus(confirmed: patient.client.email, pending: patient.client.pendingEmail)))
            }
        }
        routes.put("/v1/me/email") { request, context in
            try await signedIn(request) { patient in
                let body = try await RequestBody.decode(EmailBody.self, from: request, context: context)
                let status = try await work(patient.language) { [system] in
                    try system.clients.setEmail(clientId: patient.id, address: body.address)
                }
                return try HTTPMapping.json(EmailJSON(status), status: .accepted)
            }
        }
        routes.post("/v1/me/email/confirm") { request, context in
            try await signedIn(request) { patient in
                try checkAuthRate(context, patient.language) // a guess at a code, as a log-in is
                let body = try await RequestBody.decode(EmailCodeBody.self, from: request, context: context)
                let status = try await work(patient.language) { [system] in
                    try system.clients.confirmEmail(clientId: patient.id, code: body.code)
                }
                return try HTTPMapping.json(EmailJSON(status))
            }
        }
        routes.delete("/v1/me/email") { request, _ in
            try await signedIn(request) { patient in
                try await work(patient.language) { [system] in try system.clients.removeEmail(clientId: patient.id) }
                return Response(status: .noContent)
            }
        }

        routes.get("/v1/me/calendar-token") { request, _ in
            try await signedIn(request) { patient in
                let token = try await work(patient.language) { [system] in
                    try system.clients.existingCalendarToken(clientId: patient.id)
                }
                guard let token else { throw APIFailure(ClinicError(.notFound, .calendarTokenInvalid), language: patient.language) }
                return try HTTPMapping.json(CalendarTokenJSON(token: token, base: publicBase(request)))
            }
        }
        routes.post("/v1/me/calendar-token") { request, _ in
            try await signedIn(request) { patient in
                let token = try await work(patient.language) { [system] in
                    try system.clients.calendarToken(clientId: patient.id, rotate: true)
                }
                return try HTTPMapping.json(CalendarTokenJSON(token: token, base: publicBase(request)), status: .created)
            }
        }
        routes.delete("/v1/me/calendar-token") { request, _ in
            try await signedIn(request) { patient in
                try await work(patient.language) { [system] in try system.clients.revokeCalendarToken(clientId: patient.id) }
                return Response(status: .noContent)
            }
        }
        // The calendar app's request: the feed's own token in the query, no session.
        routes.get("/v1/me/calendar.ics") { request, _ in
            let language = language(of: request)
            let token = request.query("token") ?? ""
            let text = try await work(language) { [system] in try system.clients.calendarFeed(token: token) }
            return Self.calendar(text, filename: "appointments.ics")
        }

        routes.post("/v1/staff/messages") { request, context in
            try await staffSignedIn(request) { member, language in
                let body = try await RequestBody.decode(StaffMessageBody.self, from: request, context: context)
                let day = try body.date.map(TimeInput.parseDay)
                let requestId = context.requestId
                let count = try await work(language) { [system] in
                    try system.staff.message(member, patientLogin: body.patientLogin, day: day, departmentId: body.departmentId,
                                             text: body.text, requestId: requestId)
                }
                return try HTTPMapping.json(RecipientsJSON(recipients: count), status: .created)
            }
        }
    }

    /// `GET /v1/appointments/{id}.ics`: one appointment as an iCalendar file.
    func appointmentCalendar(_ request: Request, id text: String) async throws -> Response {
        try await signedIn(request) { patient in
            guard let id = Int64(text.dropLast(4)), id > 0 else {
                throw APIFailure(ClinicError(.notFound, .apiRouteNotFound, text), language: patient.language)
            }
            let ics = try await work(patient.language) { [system] in
                try system.appointments.calendarFile(id, clientId: patient.id)
            }
            return Self.calendar(ics, filename: "appointment-\(id).ics")
        }
    }
}
