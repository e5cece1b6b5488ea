//! A panic in one handler must not take the server down: [`CatchPanics`]
//! wraps the service, answers the request whose handler panicked with an
//! internal error (a notification's panic is only logged), and the server
//! keeps serving. Store work already runs on blocking threads, whose panics
//! come back as errors; this covers the handlers themselves.

use std::panic::AssertUnwindSafe;
use std::task::{Context, Poll};

use futures::FutureExt;
use futures::future::BoxFuture;
use tower::Service;
use tower_lsp_server::jsonrpc::{Error, ErrorCode, Request, Response};

pub struct CatchPanics<S>(pub S);

impl<S> Service<Request> for CatchPanics<S>
where
    S: Service<Request, Response = Option<Response>>,
    S::Future: Send + 'static,
    S::Error: Send + 'static,
{
    type Response = Option<Response>;
    type Error = S::Error;
    type Future = BoxFuture<'static, Result<Option<Response>, S::Error>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.0.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        let id = request.id().cloned();
        let method = request.method().to_string();
        let answer = self.0.call(request);
        Box::pin(async move {
            match AssertUnwindSafe(answer).catch_unwind().await {
                Ok(result) => result,
                Err(_) => {
                    eprintln!("mnemo lsp: the {method} handler panicked; the server keeps serving");
                    let error = Error {
                        code: ErrorCode::InternalError,
                        message: format!("mnemo: the {method} handler failed unexpectedly; please report it").into(),
                        data: None,
                    };
                    Ok(id.map(|id| Response::from_error(id, error)))
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A service whose `boom` method panics.
    struct Fragile;

    impl Service<Request> for Fragile {
        type Response = Option<Response>;
        type Error = std::convert::Infallible;
        type Future = BoxFuture<'static, Result<Option<Response>, Self::Error>>;

        fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
            Poll::Ready(Ok(()))
        }

        fn call(&mut self, request: Request) -> Self::Future {
            Box::pin(async move {
                assert_ne!(request.method(), "boom", "a handler bug");
                Ok(request.id().cloned().map(|id| Response::from_ok(id, serde_json::json!("fine"))))
            })
        }
    }

    #[tokio::test]
    async fn a_panicking_handler_answers_with_an_error_and_the_next_request_is_served() {
        let mut service = CatchPanics(Fragile);
        let answer = service.call(Request::build("boom").id(1).finish()).await.unwrap().unwrap();
        assert_eq!(answer.error().unwrap().code, ErrorCode::InternalError);
        let answer = service.call(Request::build("fine").id(2).finish()).await.unwrap().unwrap();
        assert_eq!(answer.result(), Some(&serde_json::json!("fine")));
        assert!(service.call(Request::build("boom").finish()).await.unwrap().is_none(), "a notification");
    }
}
