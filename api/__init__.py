"""The application: CLI, GraphQL schema and ASGI app, and the services that compose graph + gnn."""
