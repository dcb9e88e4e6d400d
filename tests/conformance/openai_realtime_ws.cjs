// The official OpenAI Node SDK's `OpenAIRealtimeWS` (npm `openai`, pinned in package.json)
// against `pacer native-mock --protocol openai-realtime`, as a user of the SDK would write it:
// session.update, two turns of appends + commit + response.create with audio back, a third turn
// whose response is cancelled with `response.cancel`, and a cancel with nothing to cancel
// (the API's error, after which the session goes on). Run by test_openai_sdk.cpp:
//
//   NODE_PATH=BUILD/conformance/node_modules NODE_EXTRA_CA_CERTS=CA.pem \
//     node openai_realtime_ws.cjs https://127.0.0.1:PORT/v1 MODEL
//
// Every check failing prints `conformance: FAIL <what>` and exits 1; success prints one JSON
// line (`conformance: {...}`) with what was seen, and exits 0. A liveness guard ends a hung run
// (exit 2, naming the event it waited for); nothing here measures a speed.
'use strict';

const { OpenAI } = require('openai');
const { OpenAIRealtimeWS } = require('openai/realtime/ws');

const [baseURL, model] = process.argv.slice(2);
if (!baseURL || !model) {
    console.error('usage: node openai_realtime_ws.cjs BASE_URL MODEL');
    process.exit(2);
}

function fail(what) {
    console.log(`conformance: FAIL ${what}`);
    process.exit(1);
}

function check(ok, what) {
    if (!ok)
        fail(what);
}

const client = new OpenAI({ apiKey: 'pacer-conformance-key', baseURL });
const rt = new OpenAIRealtimeWS({ model }, client);

// Every server event in arrival order, and the waits for one of them.
const events = [];
const sdkErrors = [];
const waits = [];
let waitingFor = 'session.created';

rt.on('event', (e) => {
    events.push(e);
    for (const w of [...waits])
        if (w.pred(e)) {
            waits.splice(waits.indexOf(w), 1);
            w.resolve(events.length - 1);
        }
});
// The SDK reports server `error` events here (kept), and socket failures (fatal: e.g. an
// upgrade answered with HTTP 404).
rt.on('error', (err) => {
    if (!err.error)
        fail(`the SDK reported: ${err.message}`);
    sdkErrors.push(err);
});

const guard = setTimeout(() => {
    console.log(`conformance: FAIL no ${waitingFor} within 20 s (${events.length} events seen)`);
    process.exit(2);
}, 20000);

// The index of the first event from `from` on that `pred` accepts (now or when it comes).
function waitFor(from, what, pred) {
    waitingFor = what;
    for (let i = from; i < events.length; ++i)
        if (pred(events[i]))
            return Promise.resolve(i);
    return new Promise((resolve) => waits.push({ pred, resolve }));
}

// `seconds` of a 440 Hz tone, PCM16 at 24 kHz, in appends of 80 ms (3,840 bytes).
function appendTone(seconds) {
    const samples = Math.round(24000 * seconds);
    const pcm = Buffer.alloc(samples * 2);
    for (let i = 0; i < samples; ++i)
        pcm.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / 24000)), 2 * i);
    for (let at = 0; at < pcm.length; at += 3840)
        rt.send({ type: 'input_audio_buffer.append', audio: pcm.subarray(at, at + 3840).toString('base64') });
}

// The audio bytes the deltas of response `id` carried in events[from, to).
function audioBytes(from, to, id) {
    let bytes = 0, deltas = 0;
    for (const e of events.slice(from, to))
        if (e.type === 'response.output_audio.delta' && e.response_id === id) {
            bytes += Buffer.from(e.delta, 'base64').length;
            ++deltas;
        }
    return { bytes, deltas };
}

async function main() {
    const url = new URL(rt.url.toString());
    check(url.protocol === 'wss:' && url.pathname === '/v1/realtime', `the SDK's URL ${url}`);
    check(url.searchParams.get('model') === model, `no model=${model} in the SDK's URL ${url}`);
    const created = events[await waitFor(0, 'session.created', (e) => e.type === 'session.created')];
    check(created.session && created.session.type === 'realtime', 'session.created has no realtime session');

    let mark = events.length;
    rt.send({
        type: 'session.update',
        session: {
            type: 'realtime',
            output_modalities: ['audio'],
            audio: {
                input: { format: { type: 'audio/pcm', rate: 24000 }, turn_detection: null },
                output: { format: { type: 'audio/pcm', rate: 24000 } },
            },
        },
    });
    const updated = events[await waitFor(mark, 'session.updated', (e) => e.type === 'session.updated')];
    check(updated.session.type === 'realtime', 'session.updated: session.type is not realtime');
    check(updated.session.audio.output.format.type === 'audio/pcm' &&
          updated.session.audio.output.format.rate === 24000,
          'session.updated: output is not audio/pcm at 24 kHz');

    // Two turns, each: speech, commit, response.create, the response with audio.
    const turns = [];
    for (let t = 0; t < 2; ++t) {
        mark = events.length;
        appendTone(0.4);
        rt.send({ type: 'input_audio_buffer.commit' });
        const committed = events[await waitFor(mark, 'input_audio_buffer.committed',
                                               (e) => e.type === 'input_audio_buffer.committed')];
        rt.send({ type: 'response.create' });
        const end = await waitFor(mark, 'response.done', (e) => e.type === 'response.done');
        const response = events[end].response;
        check(response.status === 'completed', `turn ${t}: response.done status ${response.status}`);
        check(events.slice(mark, end).some((e) => e.type === 'response.created' &&
                                                  e.response.id === response.id),
              `turn ${t}: no response.created for ${response.id} before its response.done`);
        const audio = audioBytes(mark, end, response.id);
        check(audio.bytes > 0 && audio.bytes % 2 === 0,
              `turn ${t}: ${audio.bytes} bytes of PCM16 audio in response ${response.id}`);
        turns.push({ item: committed.item_id, previous_item: committed.previous_item_id,
                     response: response.id, status: response.status, ...audio });
    }
    check(turns[0].response !== turns[1].response, 'both turns answered by one response id');
    check(turns[0].item !== turns[1].item, 'both commits made one item id');
    check(turns[1].previous_item === turns[0].item,
          `the second commit's previous_item_id ${turns[1].previous_item} is not ${turns[0].item}`);

    // Third turn: a response under way (its audio paced in real time by the mock), which the
    // client cancels as a user speaking over it would.
    mark = events.length;
    appendTone(0.4);
    rt.send({ type: 'input_audio_buffer.commit' });
    rt.send({ type: 'response.create' });
    const opened = events[await waitFor(mark, 'response.created', (e) => e.type === 'response.created')];
    rt.send({ type: 'response.cancel' });
    const end = await waitFor(mark, 'response.done', (e) => e.type === 'response.done');
    const cancelled = events[end].response;
    check(cancelled.id === opened.response.id,
          `response.done ${cancelled.id} is not the open response ${opened.response.id}`);
    check(cancelled.status === 'cancelled', `the cancelled response's status is ${cancelled.status}`);
    check(cancelled.status_details && cancelled.status_details.reason === 'client_cancelled',
          "the cancelled response's status_details.reason is not client_cancelled");

    // Nothing left to cancel: the API answers with an error and the session stays open.
    mark = events.length;
    const errorsBefore = sdkErrors.length;
    rt.send({ type: 'response.cancel' });
    const err = events[await waitFor(mark, 'error', (e) => e.type === 'error')];
    check(err.error.code === 'response_cancel_not_active', `error code ${err.error.code}`);
    check(sdkErrors.length === errorsBefore + 1 && sdkErrors[errorsBefore].error &&
          sdkErrors[errorsBefore].error.code === 'response_cancel_not_active',
          "the SDK did not report the server's error on its 'error' listener");
    check(sdkErrors.length === 1, `the SDK reported other errors: ${sdkErrors.map(String).join('; ')}`);
    mark = events.length;
    appendTone(0.1);
    rt.send({ type: 'response.create' });
    await waitFor(mark, 'response.created after the error', (e) => e.type === 'response.created');

    waitingFor = 'the close';
    const closed = new Promise((resolve) => rt.socket.once('close', resolve));
    rt.close();
    const code = await closed;
    clearTimeout(guard);
    console.log('conformance: ' + JSON.stringify({
        sdk: require('openai/version').VERSION,
        url: url.pathname + url.search,
        turns,
        cancelled: { response: cancelled.id, status: cancelled.status },
        error: err.error.code,
        close_code: code,
        events: events.length,
    }));
}

main().catch((e) => fail(`exception: ${e && e.stack ? e.stack : e}`));
