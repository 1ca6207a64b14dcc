// Pages' forms that send commands (`form[data-signed]`: the settings page, the award form) send them signed
// by this device's key, like the table's (campaign/signed_forms.py):
//   1. the form's fields go to the server with _prepare=1: it answers the commands it would send;
//   2. each one is signed here (this device's key registered first, if it is not yet);
//   3. the form is sent as usual, with _signed: the list of {id, action, signature}.
// The server builds the commands again from the same fields and uses a signature only for exactly the
// action signed. Nothing to sign (an invalid form): the form is sent as it is, and the server says why.

import { Registration, signCommand } from "./keys.js";

const data = JSON.parse(document.getElementById("signed-form-data").textContent);

async function post(envelope, csrf) {
  const res = await fetch(`/api/campaigns/${encodeURIComponent(data.slug)}/commands`, {
    method: "POST", credentials: "same-origin",
    headers: { "Content-Type": "application/json", "X-CSRFToken": csrf }, body: JSON.stringify(envelope),
  });
  const json = await res.json().catch(() => ({}));
  if (!res.ok) throw { code: "refused", message: `The server refused this device's key (${res.status}).`, ...(json.error || {}) };
  return json;
}

async function signedFields(form, submitter) {
  const fields = new FormData(form, submitter);
  fields.set("_prepare", "1");
  const res = await fetch(form.action || location.href, { method: "POST", credentials: "same-origin", body: fields });
  if (!res.ok) throw new Error(`The server could not prepare the form (${res.status}).`);
  const { campaign, session, commitment, commands } = await res.json();
  if (!commands.length) return [];
  const csrf = fields.get("csrfmiddlewaretoken");
  const where = { session, commitment };
  const registration = new Registration({
    slug: data.slug, campaignId: campaign, username: data.username, post: (envelope) => post(envelope, csrf), context: async () => where,
  });
  const record = await registration.ready();
  // The ids were drawn by the server before the page saw them, but these commands roll no dice: an id
  // keys only dice, so there is nothing to aim here.
  return Promise.all(commands.map(async ({ id, action }) => ({
    id, action, signature: await signCommand(record, campaign, session, commitment, id, action),
  })));
}

function setUp(form) {
  const status = form.querySelector(".signed-status") || form.appendChild(Object.assign(document.createElement("p"), {
    className: "signed-status error small", role: "alert",
  }));
  form.addEventListener("submit", async (e) => {
    if (form.dataset.signedReady) return; // the second time: signed, sent as usual
    e.preventDefault();
    const submitter = e.submitter;
    if (submitter) submitter.disabled = true;
    status.textContent = "";
    try {
      const signed = await signedFields(form, submitter);
      form.querySelector("input[name=_signed]")?.remove();
      form.append(Object.assign(document.createElement("input"), { type: "hidden", name: "_signed", value: JSON.stringify(signed) }));
      form.dataset.signedReady = "1";
      if (submitter) submitter.disabled = false;
      form.requestSubmit(submitter || undefined);
    } catch (problem) {
      if (submitter) submitter.disabled = false;
      status.textContent = `Not sent: ${problem?.message || "this device could not sign it."}`;
    }
  });
}

if (data.signing) for (const form of document.querySelectorAll("form[data-signed]")) setUp(form);
