// The parts of undici the gateway uses: Pool, Agent, and their request() method. undici's own
// index also loads fetch, WebSocket, EventSource, caches, mocks and proxies, which cost about
// 12 MB of resident memory that the gateway would never use.
import Agent from 'undici/lib/dispatcher/agent.js';
import Dispatcher from 'undici/lib/dispatcher/dispatcher.js';
import Pool from 'undici/lib/dispatcher/pool.js';
import api from 'undici/lib/api/index.js';

// What undici's index does to give every dispatcher request(), stream() and the rest.
Object.assign(Dispatcher.prototype, api);

export { Agent, Pool };
